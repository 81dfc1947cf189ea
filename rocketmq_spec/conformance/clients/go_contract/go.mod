module rocketmq-spec/drivercontract

go 1.22
