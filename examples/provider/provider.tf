terraform {
  required_providers {
    scheduler = {
      source = "schedulerhq/scheduler"
    }
  }
}

# Every argument can come from the environment instead:
# SCHEDULER_ENDPOINT, SCHEDULER_TOKEN, SCHEDULER_SUBSCRIPTION_ID, SCHEDULER_CA_CERT_PEM,
# SCHEDULER_INSECURE_SKIP_VERIFY, SCHEDULER_MAX_RETRIES.
provider "scheduler" {
  endpoint        = "https://scheduler.internal.example.com:8443"
  token           = var.scheduler_token
  subscription_id = "default"
  ca_cert_pem     = var.scheduler_ca_pem # file("scheduler-ca.pem")
}

variable "scheduler_token" {
  type      = string
  sensitive = true
}

variable "scheduler_ca_pem" {
  type        = string
  description = "PEM certificate of the CA that signed the daemon's TLS certificate."
}
