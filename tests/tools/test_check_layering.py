"""tools/check_layering.py catches each kind of layering break planted into the real tree."""

import pathlib
import subprocess
import sys
import unittest

REPO = pathlib.Path(__file__).resolve().parents[2]
CHECK = REPO / "tools" / "check_layering.py"


def run(*plants):
    args = [sys.executable, str(CHECK), "--root", str(REPO)]
    for path, line in plants:
        args += ["--plant", path, line]
    return subprocess.run(args, capture_output=True, text=True)


class CheckLayeringTest(unittest.TestCase):
    def test_the_tree_is_clean(self):
        result = run()
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("every include within its layer", result.stdout)

    def assert_caught(self, path, line, message):
        result = run((path, line))
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn(message, result.stdout)

    def test_engine_cannot_include_the_agent(self):
        self.assert_caught("engine/evaluation/evaluator.cpp",
                           '#include "agent/store/trajectory_store.h"',
                           "engine/evaluation may not include agent/store")

    def test_agent_cannot_include_the_widgets(self):
        self.assert_caught("agent/session/episode_runner.cpp",
                           '#include "widgets/core/engine_bridge.h"',
                           "agent/session may not include widgets/core")

    def test_a_lower_engine_folder_cannot_include_a_higher_one(self):
        self.assert_caught("engine/process/sandbox.cpp",
                           '#include "engine/evaluation/evaluator.h"',
                           "engine/process may not include engine/evaluation")

    def test_models_cannot_include_widgets(self):
        self.assert_caught("widgets/models/diff_model.cpp",
                           '#include "widgets/editors/code_editor.h"',
                           "widgets/models may not include widgets/editors")
        self.assert_caught("widgets/core/engine_bridge.cpp", "#include <QWidget>",
                           "widget header <QWidget> in widgets/core")

    def test_the_cli_cannot_include_the_gui(self):
        self.assert_caught("app/cli/command_eval.cpp", '#include "widgets/window/main_window.h"',
                           "app/cli may not include widgets/window")

    def test_qt_and_torch_stay_in_their_layers(self):
        self.assert_caught("engine/system/system_report.cpp", "#include <QString>",
                           "Qt header <QString> in the Qt-free engine/system")
        self.assert_caught("agent/llm/conversation.cpp", "#include <QtCore/QJsonDocument>",
                           "Qt header <QtCore/QJsonDocument> in the Qt-free agent/llm")
        self.assert_caught("app/cli/main.cpp", "#include <torch/torch.h>",
                           "torch header <torch/torch.h> outside")

    def test_relative_and_unknown_includes(self):
        self.assert_caught("engine/process/sandbox.cpp", '#include "../../agent/llm/conversation.h"',
                           "reaches outside its folder")
        self.assert_caught("engine/newfolder/thing.cpp", '#include <vector>',
                           "folder engine/newfolder has no layer")

    def test_a_crowded_folder_needs_a_reason(self):
        plants = [(f"engine/process/extra_{i}.cpp", "#include <vector>") for i in range(12)]
        result = run(*plants)
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("engine/process/: ", result.stdout)
        self.assertIn("source files (limit 15", result.stdout)


if __name__ == "__main__":
    unittest.main()
