"""The estimators: one shared base (``_base``) and one module per family
(gradient boosting, AdaBoost, random forests, bagging, voting), re-exported
by ``distboost``; ``shap`` explains their trees."""
