module splitbrain.dev/node

go 1.22
