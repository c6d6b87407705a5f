// Package studyrun runs the built-in studies: each is one or more
// experiments (app.Experiment) composed, with the study's own checks
// (the audit trail's reliability run, the replay study's capture) and its
// table after them.
package studyrun
