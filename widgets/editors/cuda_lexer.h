#pragma once

#include <Qsci/qscilexercpp.h>

namespace kwb::ui {

// C++ highlighting plus CUDA: qualifiers (__global__, __shared__), built-in variables
// (threadIdx, blockDim), vector types and the common intrinsics, as a second keyword set.
class CudaLexer : public QsciLexerCPP {
    Q_OBJECT
public:
    explicit CudaLexer(QObject* parent = nullptr);

    const char* language() const override { return "CUDA"; }
    const char* keywords(int set) const override;
};

} // namespace kwb::ui
