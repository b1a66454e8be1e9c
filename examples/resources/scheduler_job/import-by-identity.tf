# Terraform 1.12+ and OpenTofu 1.12+ import a job by its identity.
import {
  to = scheduler_job.nightly_cleanup
  identity = {
    subscription   = "default"
    resource_group = "default"
    job_collection = "ops"
    name           = "nightly-cleanup"
  }
}
