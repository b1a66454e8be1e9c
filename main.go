// Command terraform-provider-scheduler is the Terraform/OpenTofu provider of Scheduler.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	// The engine resolves IANA time zones (recurrence.time_zone) without system tzdata.
	_ "time/tzdata"

	"github.com/schedulerhq/terraform-provider-scheduler/provider"
)

// version is set by the release build (goreleaser -ldflags "-X main.version=...").
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/schedulerhq/scheduler",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}
