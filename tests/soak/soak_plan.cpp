#include "tests/soak/soak_plan.h"

#include "tests/engine/evaluation_fixture.h"

#include <random>

using nlohmann::json;

namespace kwb::test {

namespace {

constexpr int kVerifiesPerEpisode = 5;

json toolTurn(const std::string& id, const std::string& name, const json& arguments) {
    return {{"text", "Step " + id + "."},
            {"tool_calls", {{{"id", id}, {"name", name}, {"arguments", arguments}}}}};
}

Variant drawVariant(std::mt19937& random) {
    // Mostly honest work, with every kind of failure often enough to meet it several times.
    const int roll = static_cast<int>(random() % 100);
    if (roll < 50)
        return Variant::Good;
    if (roll < 65)
        return Variant::Wrong;
    if (roll < 75)
        return Variant::Hang;
    if (roll < 90)
        return Variant::Crash;
    return Variant::Broken;
}

// A turn's faults: a cut stream (dropped connection, or a response ended early) or a server
// error, each served once before the real answer; the provider or the runner must recover.
// A cut comes before the finish event (the role, then the text's two tokens; a tool call's
// events follow them): a stream cut after it is a complete answer, rightly taken, and the
// scripted turn would then be served once more.
json drawFaults(std::mt19937& random, bool textOnly) {
    const unsigned eventsBeforeFinish = textOnly ? 2 : 4;
    const int roll = static_cast<int>(random() % 100);
    if (roll < 10)
        return json::array(
            {{{"kind", "cut_stream"}, {"after_events", 1 + random() % eventsBeforeFinish}}});
    if (roll < 15)
        return json::array({{{"kind", "cut_stream"},
                             {"after_events", 1 + random() % eventsBeforeFinish},
                             {"graceful", true}}});
    if (roll < 18)
        return json::array({{{"kind", "http_500"}, {"status", 503}}});
    return json::array();
}

} // namespace

std::string_view variantName(Variant variant) {
    switch (variant) {
    case Variant::Good:
        return "good";
    case Variant::Wrong:
        return "wrong";
    case Variant::Hang:
        return "hang";
    case Variant::Crash:
        return "crash";
    case Variant::Broken:
        return "broken";
    }
    return "good";
}

std::string soakCandidate(Variant variant, int step) {
    std::string header = "# soak step " + std::to_string(step) + "\n";
    std::string body;
    switch (variant) {
    case Variant::Good:
        body = "        return x * self.weight * self.factor";
        break;
    case Variant::Wrong:
        body = "        return x * self.weight * self.factor + 1.0";
        break;
    case Variant::Hang:
        header += "import time\n";
        body = "        time.sleep(3600)\n        return x";
        break;
    case Variant::Crash:
        header += "import os\nimport signal\n";
        body = "        os.kill(os.getpid(), signal.SIGSEGV)\n        return x";
        break;
    case Variant::Broken:
        body = "        return x * (self.weight";
        break;
    }
    return tinyCandidate(body, header);
}

SoakPlan makeSoakPlan(int evaluations, std::uint32_t seed) {
    SoakPlan plan;
    std::mt19937 random(seed);
    int step = 0;
    for (int done = 0; done < evaluations;) {
        std::vector<Variant> episode;
        for (int i = 0; i < kVerifiesPerEpisode && done < evaluations; ++i, ++done) {
            const Variant variant = drawVariant(random);
            episode.push_back(variant);
            json write = toolTurn(
                "w" + std::to_string(step), "Write",
                {{"file_path", "model_new.py"}, {"content", soakCandidate(variant, step)}});
            write["faults"] = drawFaults(random, false);
            json verify = toolTurn("v" + std::to_string(step), "Verify", json::object());
            verify["faults"] = drawFaults(random, false);
            plan.turns.push_back(std::move(write));
            plan.turns.push_back(std::move(verify));
            ++step;
        }
        json doneTurn = {{"text", "Done."}};
        doneTurn["faults"] = drawFaults(random, true);
        plan.turns.push_back(std::move(doneTurn));
        plan.episodes.push_back(std::move(episode));
    }
    return plan;
}

std::size_t SoakPlan::requestCount() const {
    return turns.size() + static_cast<std::size_t>(faultCount());
}

int SoakPlan::faultCount() const {
    int count = 0;
    for (const json& turn : turns)
        count += static_cast<int>(turn.value("faults", json::array()).size());
    return count;
}

int SoakPlan::cutStreamCount() const {
    int count = 0;
    for (const json& turn : turns)
        for (const json& fault : turn.value("faults", json::array()))
            count += fault.value("kind", "") == "cut_stream";
    return count;
}

} // namespace kwb::test
