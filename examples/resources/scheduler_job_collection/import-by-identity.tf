# Terraform 1.12+ and OpenTofu 1.12+ import a job collection by its identity.
import {
  to = scheduler_job_collection.ops
  identity = {
    subscription   = "default"
    resource_group = "platform"
    name           = "ops"
  }
}
