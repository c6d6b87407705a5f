package report

// LoadSweepPointsForTest are the load sweep the package's own tests
// draw, for the browser test outside the package.
var LoadSweepPointsForTest = loadSweepPoints
