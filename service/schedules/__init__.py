"""Schedules: cron slots, claiming what is due, the nightly series and their verdicts."""
