// Every credential the process can see is redacted, also from text that arrives in pieces.
#include "agent/llm/known_secrets.h"
#include "engine/process/environment.h"

#include <algorithm>
#include <cstdlib>
#include <gtest/gtest.h>
#include <optional>
#include <string>

using namespace kwb::agent;

namespace {

// Sets an environment variable for one test and restores it after.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name))
            old_ = old;
        setenv(name, value, 1);
    }
    ~ScopedEnv() {
        if (old_)
            setenv(name_, old_->c_str(), 1);
        else
            unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

std::string streamed(StreamRedactor& redactor, const std::string& text, std::size_t pieceSize) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); i += pieceSize)
        out += redactor.feed(text.substr(i, pieceSize));
    return out + redactor.flush();
}

} // namespace

TEST(KnownSecrets, CredentialNamesAreRecognised) {
    for (const char* name : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN", "AWS_ACCESS_KEY_ID",
                             "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "MY_DB_PASSWORD",
                             "GOOGLE_APPLICATION_CREDENTIALS", "slack_webhook_secret"})
        EXPECT_TRUE(kwb::looksLikeCredentialName(name)) << name;
    for (const char* name : {"PATH", "HOME", "LANG", "CUDA_VISIBLE_DEVICES", "KWB_PYTHON"})
        EXPECT_FALSE(kwb::looksLikeCredentialName(name)) << name;
}

TEST(KnownSecrets, EveryCredentialInTheEnvironmentIsKnown) {
    ScopedEnv aws("AWS_SECRET_ACCESS_KEY", "aws-secret-0123456789");
    ScopedEnv other("SOME_OTHER_PROVIDER_TOKEN", "other-token-abcdef");
    ScopedEnv shortOne("TINY_KEY", "abc"); // too short to redact safely
    ScopedEnv harmless("KWB_TEST_HARMLESS", "not-a-secret-value");
    const auto secrets = knownSecrets({"sk-the-active-key-000", "sk-the-active-key-000"});
    const auto has = [&](const std::string& s) {
        return std::find(secrets.begin(), secrets.end(), s) != secrets.end();
    };
    EXPECT_TRUE(has("sk-the-active-key-000"));
    EXPECT_TRUE(has("aws-secret-0123456789"));
    EXPECT_TRUE(has("other-token-abcdef"));
    EXPECT_FALSE(has("abc"));
    EXPECT_FALSE(has("not-a-secret-value"));
    EXPECT_EQ(std::count(secrets.begin(), secrets.end(), "sk-the-active-key-000"), 1);
}

// A stored setting names the variable instead of holding the key, and reads back to the key.
TEST(KnownSecrets, CredentialsBecomeEnvironmentReferencesAndBack) {
    ScopedEnv groq("GROQ_API_KEY", "gsk_GROQSECRETVALUE123456789");
    const std::string url = "http://user:gsk_GROQSECRETVALUE123456789@127.0.0.1:9/v1";
    const std::string stored = withEnvironmentReferences(url);
    EXPECT_EQ(stored, "http://user:${GROQ_API_KEY}@127.0.0.1:9/v1");
    EXPECT_EQ(expandEnvironmentReferences(stored), url);
    EXPECT_EQ(withEnvironmentReferences("http://127.0.0.1:9/v1"), "http://127.0.0.1:9/v1");
}

TEST(KnownSecrets, StreamedTextIsRedactedWhereverThePiecesSplitIt) {
    const std::vector<std::string> secrets = {"sk-live-ABCDEFGH", "aws-secret-0123456789"};
    const std::string text = "The key is sk-live-ABCDEFGH and aws-secret-0123456789; "
                             "not sk-live-ABCDEFGX though.";
    const std::string expected =
        "The key is [redacted] and [redacted]; not sk-live-ABCDEFGX though.";
    for (std::size_t piece : {1u, 2u, 3u, 5u, 7u, 16u, 1000u}) {
        StreamRedactor redactor(secrets);
        EXPECT_EQ(streamed(redactor, text, piece), expected) << "pieces of " << piece;
    }
}

TEST(KnownSecrets, TextWithoutSecretsFlowsAtOnce) {
    StreamRedactor redactor({"sk-live-ABCDEFGH"});
    EXPECT_EQ(redactor.feed("hello "), "hello ");
    // Only a tail that could begin a secret waits for the next piece.
    EXPECT_EQ(redactor.feed("world sk-li"), "world ");
    EXPECT_EQ(redactor.feed("ght"), "sk-light");
    EXPECT_EQ(redactor.flush(), "");
    StreamRedactor none({});
    EXPECT_EQ(none.feed("sk-live"), "sk-live");
}
