// kwb: the headless command-line front end. Qt-free, so it runs on GPU servers.
#include "agent/providers/http_client.h"
#include "commands.h"
#include "kwb/version.h"

#include <CLI/CLI.hpp>
#include <iostream>

namespace {

std::string versionText() {
    std::string text = std::string("kwb ") + kwb::build::kVersion + "\nCUDA toolkit " +
                       kwb::build::kCudaToolkitVersion + "\n" + kwb::agent::curlVersionText();
#ifdef KWB_HAVE_LIBTORCH
    text += std::string("\nlibtorch ") + kwb::build::kTorchVersion;
#else
    text += "\nlibtorch: not linked";
#endif
    return text;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"kwb: Kernel Workbench headless CLI (workspaces, evaluation, agents, training)"};
    app.set_version_flag("--version,-V", versionText());
    app.require_subcommand(0, 1);
    kwb::cli::addInfoCommand(app);
    kwb::cli::addTasksCommand(app);
    kwb::cli::addWorkspaceCommand(app);
    kwb::cli::addEvalCommand(app);
    kwb::cli::addBaselineCommand(app);
    kwb::cli::addTimelineCommand(app);
    kwb::cli::addCountersCommand(app);
    kwb::cli::addAgentCommand(app);
    kwb::cli::addEpisodesCommand(app);
    kwb::cli::addRolloutCommands(app);
    kwb::cli::addModelCommand(app);
    kwb::cli::addTrainCommand(app);
    kwb::cli::addNvrtcCommand(app);
    kwb::cli::addServeCommand(app);
    kwb::cli::addDoctorCommand(app);
    app.footer("Run 'kwb SUBCOMMAND --help' for the options of one subcommand.");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        return app.exit(error);
    }
    if (app.get_subcommands().empty()) {
        std::cout << app.help();
        return kwb::cli::kExitOk;
    }
    return kwb::cli::kExitOk;
}
