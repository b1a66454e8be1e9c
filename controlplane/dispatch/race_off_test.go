//go:build !race

package dispatch

// raceDetector says the tests run with -race (see race_on_test.go).
const raceDetector = false
