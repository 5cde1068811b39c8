package main

// Main is main, for the test binary to run as the scripts' osslcheck
// command (testscript.Main in TestMain).
var Main = main
