package server

// Alive is alive, for the external tests.
var Alive = alive
