// Package sdktest drives the daemon's API with Microsoft's Go SDK for Azure Scheduler
// (github.com/Azure/azure-sdk-for-go/services/scheduler/mgmt/2016-03-01/scheduler, v59.2.0),
// unchanged: only its base URL and a bearer-token authorizer point it at the daemon. It is a
// nested module so that the main module does not depend on the SDK.
package sdktest
