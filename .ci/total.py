"""The two pytest runs of .ci/run as one closing line: the counts of each run's summary added, and a non-zero exit
when either run failed (its exit code, or any test failed or errored)."""
import re
import sys

rest_rc, tools_rc, *logs = sys.argv[1:]
totals = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
for log in logs:
    with open(log, errors="replace") as f:
        summary = [line for line in f if re.search(r"\d+ (passed|failed|error)", line)]
    for count, what in re.findall(r"(\d+) (passed|failed|errors?|skipped)", summary[-1] if summary else ""):
        totals[what.rstrip("s") if what.startswith("error") else what] += int(count)
failed = totals["failed"] + totals["error"]
print(f"total: {totals['passed']} passed, {failed} failed, {totals['skipped']} skipped")
sys.exit(1 if failed or int(rest_rc) or int(tools_rc) else 0)
