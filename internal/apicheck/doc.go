// Package apicheck holds no code, only a test: that the exported API of
// every public package of the module (nsrnn, stacks, controller, param,
// data, experiment, …) names no type of an internal package. A package
// whose exported signatures mention an internal type cannot be used as
// intended from another module, nor imported by interpreters that
// generate wrappers for every exported name (gophernotes fails with "use
// of internal package").
package apicheck
