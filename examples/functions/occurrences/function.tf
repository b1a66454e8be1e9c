# The next 3 executions of "every other day at 14:00", for a job created now (the seeds' example).
output "every_other_day" {
  value = provider::scheduler::occurrences(
    "2015-04-07T14:00:00Z",
    { frequency = "Day", interval = 2 },
    3,
    "2015-04-08T13:00:00Z", # optional "now"; default the current time
  )
  # ["2015-04-09T14:00:00Z", "2015-04-11T14:00:00Z", "2015-04-13T14:00:00Z"]
}

# The last Friday of the next 6 months, from the current time.
output "last_fridays" {
  value = provider::scheduler::occurrences(
    "2026-01-01T16:00:00",
    {
      frequency = "Month"
      time_zone = "Europe/London"
      schedule  = { monthly_occurrences = [{ day = "Friday", occurrence = -1 }] }
    },
    6,
  )
}
