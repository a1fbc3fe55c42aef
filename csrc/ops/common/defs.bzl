# SPDX-License-Identifier: Apache-2.0
"""What every op family that includes the cuDNN frontend compiles with."""

# Every file that includes the cuDNN frontend compiles it alike (its inline code must be one
# definition): the frontend resolves libcudnn through slimcuda's handle (csrc/cuda_libs/cudnn.h)
# and needs no JSON here (no graph serialization): half the compile time.
CUDNN_FRONTEND_DEFINES = [
    "NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING",
    "CUDNN_FRONTEND_SKIP_JSON_LIB",
]
