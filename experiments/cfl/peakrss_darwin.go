//go:build darwin || ios

package main

// maxrssUnit: getrusage's maxrss counts bytes on these systems.
const maxrssUnit = 1
