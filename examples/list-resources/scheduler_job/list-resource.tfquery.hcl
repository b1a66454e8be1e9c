# Terraform 1.14 and later: list the disabled jobs of a collection, and write their
# configuration and import blocks:
#   terraform query -generate-config-out=generated.tf
list "scheduler_job" "disabled" {
  provider         = scheduler
  include_resource = true

  config {
    job_collection_id = "/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/ops"
    state             = "Disabled"
  }
}
