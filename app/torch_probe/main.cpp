// kwb-libtorch: reports the libtorch this build links. A separate process on purpose: libtorch
// exports its own copies of some std:: symbols (std::filesystem among them), which interpose on
// the host program's and crashed kwb when both lived in one process. The libtorch parts of the
// engine therefore run in their own processes, which also keeps a torch crash away from the UI.
#include "engine/torch/libtorch_info.h"

#include <iostream>

int main() {
    std::cout << kwb::libtorchSummary() << "\n";
    return 0;
}
