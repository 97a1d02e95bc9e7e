"""The processes: the RQ worker and `leadrelay run`, the web server command, the embedded
Redis, doctor, whose Redis it is and whether it keeps what it is given, send-test.

Notes: docs/internals/run.md
"""
