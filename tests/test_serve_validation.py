"""The server's ``validation = "FILE.csv"``: a model's scored validation set becomes its ``streammon.Validation``
baseline (the label-free estimate with scores), kept across a restart from its checkpoint; bad files and a
``baseline`` beside it are configuration errors naming the model and the problem."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from streammon.serve.config import ConfigError, parse
from streammon.serve.hub import open_model


def _csv(path: Path, rng: np.random.Generator, n: int = 2_000) -> tuple[np.ndarray, np.ndarray]:
    y = (rng.random(n) < 0.1).astype(int)
    s = 1.0 / (1.0 + np.exp(-(np.where(y == 1, 2.0, -2.0) + rng.normal(size=n))))
    pred = (s > 0.5).astype(int)
    path.write_text("y_true,y_pred,y_score\n" + "\n".join(f"{a},{b},{float(c)!r}" for a, b, c in zip(y, pred, s,
                                                                                             strict=True)))
    return y, pred


def _config(tmp_path: Path, extra: str = "") -> str:
    return (f'[server]\nlisten = "127.0.0.1:9464"\nstate_dir = "{tmp_path}"\n[models.fraud]\n'
            f'windows = ["sliding:2000"]\nclasses = [0, 1]\npositive = 1\nvalidation = "v.csv"\n{extra}')


def test_a_validation_file_is_the_models_scored_baseline_across_a_restart(tmp_path: Path) -> None:
    """The CSV's counts are the validation's (recounted here); a monitor opened from the config estimates a scored
    window by EM, and so does the one reopened from its checkpoint."""
    rng = np.random.default_rng(4)
    y, pred = _csv(tmp_path / "v.csv", rng)
    model = parse(_config(tmp_path), base=tmp_path).models["fraud"]
    assert model.validation is not None
    assert model.validation.counts.tolist() == [[int(np.sum((y == a) & (pred == b))) for b in (0, 1)]
                                                for a in (0, 1)]
    monitor = open_model(model, tmp_path, "fraud")
    s = 1.0 / (1.0 + np.exp(-(np.where(rng.random(2_000) < 0.3, 2.0, -2.0) + rng.normal(size=2_000))))
    monitor.predict_many(list(range(2_000)), (s > 0.5).astype(int), y_score=s)
    before = monitor.report().windows["sliding_2000"].estimate
    assert before is not None and before.method == "em"
    monitor.save(tmp_path / "fraud.state.json")
    monitor.close()
    again = open_model(model, tmp_path, "fraud").report().windows["sliding_2000"].estimate
    assert again == before


@pytest.mark.parametrize(("content", "extra", "says"), [
    ("y_true,y_pred\n1,1\n", "", "y_score"),
    ("a,b,c\n1,1,0.5\n", "", "needs a header"),
    ("y_true,y_pred,y_score\n1,1,1.5\n0,0,0.1\n", "", "1.5"),
    ("y_true,y_pred,y_score\n1,1\n", "", "shorter than its header"),
    (None, "", "cannot read"),
    ("y_true,y_pred,y_score\n1,1,0.9\n0,0,0.1\n", "baseline = { 0 = { 0 = 1 } }\n", "not both"),
])
def test_bad_validation_files_are_config_errors(tmp_path: Path, content: str | None, extra: str, says: str) -> None:
    """A missing score column, a wrong header, a score outside [0, 1], a short row, a missing file, and a baseline
    beside the validation: each a ConfigError naming the model and what is wrong."""
    if content is not None:
        (tmp_path / "v.csv").write_text(content)
    with pytest.raises(ConfigError, match=says) as error:
        parse(_config(tmp_path, extra), base=tmp_path)
    assert "[models.fraud]" in str(error.value)
