#include "widgets/editors/cuda_lexer.h"

namespace kwb::ui {
namespace {

// Scintilla wants one space-separated list per keyword set.
const char* kCudaKeywords =
    "__global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ "
    "__forceinline__ __noinline__ __launch_bounds__ __grid_constant__ __align__ "
    "threadIdx blockIdx blockDim gridDim warpSize clusterDim clusterIdx "
    "dim3 cudaStream_t cudaError_t cudaEvent_t "
    "char1 char2 char3 char4 uchar1 uchar2 uchar3 uchar4 short2 short4 ushort2 ushort4 "
    "int1 int2 int3 int4 uint1 uint2 uint3 uint4 long2 long4 ulong2 ulong4 "
    "float1 float2 float3 float4 double2 double4 half half2 __half __half2 "
    "__nv_bfloat16 __nv_bfloat162 nv_bfloat16 "
    "__syncthreads __syncthreads_count __syncthreads_and __syncthreads_or __syncwarp "
    "__threadfence __threadfence_block __threadfence_system "
    "__shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync __ballot_sync __any_sync "
    "__all_sync __activemask __match_any_sync __reduce_add_sync __reduce_max_sync "
    "atomicAdd atomicSub atomicExch atomicMin atomicMax atomicInc atomicDec atomicCAS "
    "atomicAnd atomicOr atomicXor __ldg __ldcg __ldcs __stcg __stcs "
    "__expf __logf __sinf __cosf __tanf __powf __fdividef __frcp_rn __fsqrt_rn __saturatef "
    "__fmaf_rn __fmul_rn __fadd_rn rsqrtf sqrtf expf exp2f logf tanhf erff fmaxf fminf fabsf "
    "__float2half __half2float __float2bfloat16 __bfloat162float __hadd __hmul __hfma "
    "__clz __popc __ffs __brev __funnelshift_l __funnelshift_r __umulhi __mul24 "
    "clock clock64 __nanosleep cooperative_groups cuda wmma mma_sync load_matrix_sync "
    "store_matrix_sync fill_fragment __cvta_generic_to_shared __pipeline_memcpy_async "
    "__pipeline_commit __pipeline_wait_prior";

} // namespace

CudaLexer::CudaLexer(QObject* parent) : QsciLexerCPP(parent) {}

const char* CudaLexer::keywords(int set) const {
    if (set == 2)
        return kCudaKeywords;
    return QsciLexerCPP::keywords(set);
}

} // namespace kwb::ui
