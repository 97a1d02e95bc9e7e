"""What every layer shares: the refusal and Meta-error trees, what Meta's codes mean and when
to try again (policy), Redis keys and queues, logs, times, the clock, counters, the JSON
reader.

Notes: docs/internals/common.md
"""
