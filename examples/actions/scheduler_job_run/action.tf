# Terraform 1.14 and later: run the nightly cleanup now, once, and wait for its outcome.
#   terraform apply -invoke=action.scheduler_job_run.cleanup_now
action "scheduler_job_run" "cleanup_now" {
  config {
    job_id              = scheduler_job.nightly_cleanup.id
    wait_for_completion = true
    timeout             = "5m"
  }
}

# Or after every change of the job:
resource "terraform_data" "cleanup_changed" {
  input = scheduler_job.nightly_cleanup.action

  lifecycle {
    action_trigger {
      events  = [after_update]
      actions = [action.scheduler_job_run.cleanup_now]
    }
  }
}
