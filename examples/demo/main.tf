# The demo applied by `make demo` (tools/demo.sh): a collection and a few jobs that post to the
# local receiver the demo starts. The provider reads SCHEDULER_ENDPOINT and SCHEDULER_TOKEN.
terraform {
  required_providers {
    scheduler = {
      source = "schedulerhq/scheduler"
    }
  }
}

variable "receiver_url" {
  description = "Base URL of the demo's webhook receiver."
  type        = string
}

provider "scheduler" {}

resource "scheduler_job_collection" "demo" {
  name     = "demo"
  location = "local"
  sku      = "Standard"
}

# No start time and no recurrence: runs once, immediately.
resource "scheduler_job" "hello" {
  job_collection_id = scheduler_job_collection.demo.id
  name              = "hello"
  action {
    type = "Http"
    request {
      uri    = "${var.receiver_url}/hello"
      method = "POST"
      body   = "hello from the scheduler"
    }
  }
}

# Every minute, on the minute.
resource "scheduler_job" "heartbeat" {
  job_collection_id = scheduler_job_collection.demo.id
  name              = "heartbeat"
  start_time        = "2026-01-01T00:00:00Z"
  action {
    type = "Http"
    request {
      uri    = "${var.receiver_url}/heartbeat"
      method = "POST"
      body   = "still here"
      headers = {
        "Content-Type" = "text/plain"
      }
    }
    retry_policy {
      retry_type     = "Fixed"
      retry_interval = "PT30S"
      retry_count    = 2
    }
  }
  recurrence {
    frequency = "Minute"
    interval  = 1
  }
}

# Nightly cleanup at 02:30 Berlin time.
resource "scheduler_job" "nightly_cleanup" {
  job_collection_id = scheduler_job_collection.demo.id
  name              = "nightly-cleanup"
  start_time        = "2026-01-01T02:30:00"
  action {
    type = "Http"
    request {
      uri    = "${var.receiver_url}/cleanup"
      method = "DELETE"
    }
  }
  recurrence {
    frequency = "Day"
    time_zone = "Europe/Berlin"
    schedule {
      hours   = [2]
      minutes = [30]
    }
  }
}

# Last Friday of every month at 17:00 UTC.
resource "scheduler_job" "month_end_report" {
  job_collection_id = scheduler_job_collection.demo.id
  name              = "month-end-report"
  start_time        = "2026-01-01T00:00:00Z"
  action {
    type = "Http"
    request {
      uri    = "${var.receiver_url}/report"
      method = "POST"
      body   = "{\"report\":\"month-end\"}"
    }
  }
  recurrence {
    frequency = "Month"
    schedule {
      hours   = [17]
      minutes = [0]
      monthly_occurrences {
        day        = "Friday"
        occurrence = -1
      }
    }
  }
}

data "scheduler_job" "heartbeat" {
  job_collection_id = scheduler_job_collection.demo.id
  name              = scheduler_job.heartbeat.name
}

data "scheduler_job_history" "heartbeat" {
  job_id = scheduler_job.heartbeat.id
}

output "heartbeat_status" {
  description = "Live status of the every-minute job."
  value       = data.scheduler_job.heartbeat.status
}

output "heartbeat_history" {
  description = "The every-minute job's attempts, newest first."
  value       = [for h in data.scheduler_job_history.heartbeat.entries : "${h.start_time} ${h.status} ${h.message}"]
}

output "month_end_report_next" {
  description = "The next three runs of the month-end report, computed by the engine."
  # A recurrence block is not a value a data source's block can take; the function takes it.
  value = provider::scheduler::occurrences(scheduler_job.month_end_report.start_time, scheduler_job.month_end_report.recurrence, 3)
}

output "hello_status" {
  description = "The run-once job: Completed after its single run."
  value       = scheduler_job.hello.status.state
}
