x __global__ void k( { }
