extern "C" __global__ void k(float* x) {
    int i = threadIdx.x;
    x[i] = undefined_name;
	float y = x[0]
    int z = 1; (void)y; (void)z;
}
