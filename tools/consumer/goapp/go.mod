module example.com/goapp

go 1.21

require github.com/slimcuda/slimcuda v0.0.0

replace github.com/slimcuda/slimcuda => ../../..
