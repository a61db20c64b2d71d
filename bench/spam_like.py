"""A deterministic stand-in shaped like the spambase e-mail data of ESL (section 9.1.2).

**This is not the real spambase data**, and nothing is downloaded: it imitates its
shape so that benchmarks can run at its size anywhere. Like spambase it has 4,601
rows and 57 columns, split as ESL splits it into 3,065 training and 1,536 test rows,
about 39 % of them spam (label 1):

- 48 ``word_freq_WORD`` and 6 ``char_freq_CHAR`` columns: the percentage of the
  message's words (characters) that are WORD (CHAR), rounded to 2 decimals, zero
  in most rows (each column nonzero in about 5-40 % of them) and heavy-tailed
  (log-normal) where not;
- ``capital_run_length_average`` (a float rounded to 3 decimals, at least 1),
  ``capital_run_length_longest`` and ``capital_run_length_total`` (positive
  integers, total >= longest >= average): runs of capital letters, heavy-tailed.

Each message has an unobserved "spamminess" that makes the spam words, dollars and
capitals more frequent together (so the columns are correlated, as in e-mail); the
label is then drawn from a log-odds that depends, non-linearly (thresholds, saturation,
one interaction), on a handful of the columns only: ``$``, ``!``, "remove", "free",
"your" with "000", the longest capital run, and the ham markers "hp", "george" and
"edu". Its scale is tuned so that boosting 200 trees of depth 4 on the training rows
reaches a test error of about 5-7 % (spambase: about 4.5-5.5 %).

    python bench/spam_like.py            # column summary, label rate, an HGB's test error
"""

from __future__ import annotations

import numpy as np

N_ROWS, N_TRAIN = 4_601, 3_065
SEED = 20240917
WORDS = ["make", "address", "all", "3d", "our", "over", "remove", "internet", "order", "mail",
         "receive", "will", "people", "report", "addresses", "free", "business", "email", "you",
         "credit", "your", "font", "000", "money", "hp", "hpl", "george", "650", "lab", "labs",
         "telnet", "857", "data", "415", "85", "technology", "1999", "parts", "pm", "direct",
         "cs", "meeting", "original", "project", "re", "edu", "table", "conference"]
CHARS = [";", "(", "[", "!", "$", "#"]
CAPITALS = ["capital_run_length_average", "capital_run_length_longest",
            "capital_run_length_total"]
FEATURES = ([f"word_freq_{word}" for word in WORDS] + [f"char_freq_{char}" for char in CHARS]
            + CAPITALS)
# Nonzero rate and how strongly spamminess raises (> 0) or lowers (< 0) it, for the columns
# the label depends on and a few other telling ones; the rest draw theirs from the seed.
_KNOWN = {"word_freq_remove": (0.16, 1.6), "word_freq_free": (0.24, 1.3),
          "word_freq_your": (0.36, 1.0), "word_freq_000": (0.14, 1.5),
          "word_freq_money": (0.17, 1.3), "word_freq_hp": (0.22, -1.6),
          "word_freq_hpl": (0.16, -1.4), "word_freq_george": (0.12, -1.5),
          "word_freq_edu": (0.10, -1.2), "char_freq_!": (0.35, 1.4), "char_freq_$": (0.25, 1.7)}
# Log-odds scale and intercept: about 39 % spam, a test error of about 5-7 % for boosting.
_SCALE, _INTERCEPT = 3.5, -0.9


def _column_parameters(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Per frequency column: nonzero rate, spamminess tilt, log median and spread."""
    n = len(WORDS) + len(CHARS)
    rate, tilt = rng.uniform(0.05, 0.35, n), rng.normal(0.0, 0.6, n)
    for j, name in enumerate(FEATURES[:n]):
        rate[j], tilt[j] = _KNOWN.get(name, (rate[j], tilt[j]))
    chars = np.arange(n) >= len(WORDS)
    log_median = np.where(chars, rng.uniform(np.log(0.03), np.log(0.3), n),
                          rng.uniform(np.log(0.15), np.log(1.0), n))
    return {"rate": rate, "tilt": tilt, "log_median": log_median,
            "sigma": rng.uniform(0.6, 1.1, n)}


def _frequencies(rng: np.random.Generator, spamminess: np.ndarray,
                 params: dict[str, np.ndarray]) -> np.ndarray:
    """The 54 percentage columns, shape (n, 54): mostly zero, log-normal where not."""
    n = len(spamminess)
    logit = np.log(params["rate"] / (1 - params["rate"])) + params["tilt"] * spamminess[:, None]
    nonzero = rng.random((n, len(params["rate"]))) < 1 / (1 + np.exp(-logit))
    log_value = (params["log_median"] + 0.3 * params["tilt"] * spamminess[:, None]
                 + params["sigma"] * rng.standard_normal(nonzero.shape))
    return np.where(nonzero, np.round(np.clip(np.exp(log_value), 0.01, 100.0), 2), 0.0)


def _capital_runs(rng: np.random.Generator, spamminess: np.ndarray) -> np.ndarray:
    """Average, longest and total run of capitals, shape (n, 3): heavy-tailed, total >=
    longest >= average >= 1, longest and total integers."""
    n = len(spamminess)
    average = np.round(1 + np.exp(rng.normal(0.2 + 0.35 * spamminess, 1.0)), 3)
    longest = np.maximum(np.ceil(average),
                         np.round(average * np.exp(rng.normal(1.6 + 0.4 * spamminess, 1.0))))
    total = longest + np.round(longest * np.exp(rng.normal(1.7 + 0.3 * spamminess, 1.0, n)))
    return np.column_stack([average, longest, total])


def log_odds(X: np.ndarray) -> np.ndarray:
    """The label's log-odds, shape (n,): thresholds, saturation and one interaction of
    nine columns."""
    column = {name: X[:, j] for j, name in enumerate(FEATURES)}
    return _SCALE * (
        _INTERCEPT
        + 1.8 * (column["char_freq_$"] > 0.05)
        + 1.5 * np.tanh(4.0 * column["word_freq_remove"])
        + 1.1 * np.tanh(2.0 * column["char_freq_!"])
        + 0.9 * (column["word_freq_free"] > 0.2)
        + 1.1 * (column["word_freq_your"] > 0.4) * (column["word_freq_000"] > 0)
        + 0.8 * np.tanh(0.7 * (np.log(column["capital_run_length_longest"]) - 2.5))
        - 2.4 * (column["word_freq_hp"] > 0)
        - 1.8 * (column["word_freq_george"] > 0)
        - 1.1 * (column["word_freq_edu"] > 0.1)
    )


def generate(n_rows: int = N_ROWS, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n_rows`` messages.

    Parameters
    ----------
    n_rows : int
        Number of rows (4,601 in spambase).
    seed : int
        The columns' parameters come from ``(seed, 0)``, the rows from ``(seed, 1)``:
        the same seed gives the same data, and every ``n_rows`` the same kind of data.

    Returns
    -------
    X : ndarray of shape (n_rows, 57), float64
        The columns of `FEATURES`.
    y : ndarray of shape (n_rows,), int8
        1 for spam.
    """
    params = _column_parameters(np.random.default_rng([seed, 0]))
    rng = np.random.default_rng([seed, 1])
    spamminess = rng.standard_normal(n_rows)
    X = np.column_stack([_frequencies(rng, spamminess, params), _capital_runs(rng, spamminess)])
    y = (rng.random(n_rows) < 1 / (1 + np.exp(-log_odds(X)))).astype(np.int8)
    return X, y


def train_test(scale: float = 1.0, seed: int = SEED) -> tuple[np.ndarray, ...]:
    """ESL's split of the spam-like rows: (X_train, y_train, X_test, y_test).

    ``scale`` shrinks (or grows) both parts: ``round(3065 * scale)`` training and
    ``round(1536 * scale)`` test rows (at least 20 each), for quick checks.
    """
    n_train = max(20, round(N_TRAIN * scale))
    n_rows = n_train + max(20, round((N_ROWS - N_TRAIN) * scale))
    X, y = generate(n_rows, seed)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def _summary() -> None:
    """Print each column's nonzero rate and quantiles, the label rate and an HGB's test
    error (200 trees of depth 4, learning rate 0.1)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    X_train, y_train, X_test, y_test = train_test()
    X = np.vstack([X_train, X_test])
    for j, name in enumerate(FEATURES):
        nonzero = X[:, j] > 0
        q50, q90, q100 = np.quantile(X[nonzero, j], [0.5, 0.9, 1.0])
        print(f"{name:30s} nonzero {nonzero.mean():6.1%}  median {q50:8.3f}  "
              f"90 % {q90:9.3f}  max {q100:10.3f}")
    print(f"spam: {np.concatenate([y_train, y_test]).mean():.1%}")
    model = HistGradientBoostingClassifier(max_iter=200, max_depth=4, max_leaf_nodes=None,
                                           early_stopping=False).fit(X_train, y_train)
    print(f"HistGradientBoostingClassifier test error {1 - model.score(X_test, y_test):.4f}; "
          f"Bayes error {np.minimum(_proba(X_test), 1 - _proba(X_test)).mean():.4f}")


def _proba(X: np.ndarray) -> np.ndarray:
    """The true probability of spam."""
    return 1 / (1 + np.exp(-log_odds(X)))


if __name__ == "__main__":
    _summary()
