from service.runs.progress import progress_line

STATE = {"summary": "HEALTH_OK, 4/4 OSDs up"}


def test_before_the_fault_the_line_counts_from_the_load_start():
    line = progress_line(7, 130.0, 100.0, None, False, {"ops": 64.4, "errors": 0}, STATE)
    assert line == "[run 7 30s into load] load 64 ops/s, 0 errors | HEALTH_OK, 4/4 OSDs up"


def test_after_the_fault_it_counts_from_the_fault_and_says_when_the_load_ended():
    line = progress_line(7, 130.0, 100.0, 115.0, True, {"ops": 64}, {"error": "mon timeout"})
    assert line == "[run 7 +15s after fault] load ended | mon timeout"


def test_no_sample_yet_is_said():
    assert progress_line(3, 1.0, 0.0, None, False, {}, {}).endswith(
        "load 0 ops/s, 0 errors | no cluster sample yet")
