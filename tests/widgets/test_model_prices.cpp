// The cost meter's prices: the built-in list, prefix matching, and a user file that corrects and
// extends it (a malformed file changes nothing and says why).
#include "widgets/model_prices.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace kwb::ui;

namespace {

QString writeFile(const QTemporaryDir& dir, const char* name, const QByteArray& text) {
    QFile file(dir.filePath(QString::fromLatin1(name)));
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size())
        qFatal("cannot write %s", name);
    return file.fileName();
}

} // namespace

class TestModelPrices : public QObject {
    Q_OBJECT
private slots:
    void cleanup() { clearPriceOverrides(); }

    void builtInPricesMatchByLongestPrefix() {
        const auto mini = priceOf("gpt-4.1-mini-2025-04-14");
        QVERIFY(mini);
        QCOMPARE(mini->inputPerMillion, 0.40);
        QCOMPARE(priceOf("gpt-4.1-2025-04-14")->outputPerMillion, 8.0);
        QVERIFY(!priceOf("qwen2.5-coder-32b"));
        kwb::agent::TokenUsage usage{1'000'000, 100'000, 400'000};
        // 600k uncached at 2.00 + 400k cached at 0.50 + 100k out at 8.00 = 1.2 + 0.2 + 0.8.
        QCOMPARE(costText(usage, "gpt-4.1"), std::string("$2.2000"));
        QCOMPARE(costText(usage, "my-local-model"), std::string("n/a"));
    }

    void aUserFileCorrectsAndExtendsTheTable() {
        QTemporaryDir dir;
        const QString file =
            writeFile(dir, "prices.json",
                      R"({"gpt-4.1": {"input": 1.0, "cached_input": 0.25, "output": 4.0},
                "my-local-model": {"input": 0.05, "output": 0.1}})");
        std::string error;
        QCOMPARE(loadPriceOverrides(file.toStdString(), &error), 2);
        QVERIFY(error.empty());
        QCOMPARE(priceOf("gpt-4.1-2025-04-14")->inputPerMillion, 1.0);
        QCOMPARE(priceOf("gpt-4.1-mini")->inputPerMillion, 0.40); // the longer built-in still wins
        const auto local = priceOf("my-local-model-q4");
        QVERIFY(local);
        QCOMPARE(local->cachedInputPerMillion, 0.05); // defaults to the input price
    }

    void aMalformedFileChangesNothing() {
        QTemporaryDir dir;
        const QString good =
            writeFile(dir, "good.json", R"({"my-local-model": {"input": 1, "output": 2}})");
        QCOMPARE(loadPriceOverrides(good.toStdString()), 1);
        for (const QByteArray& text :
             {QByteArray("{not json"), QByteArray("[1, 2]"),
              QByteArray(R"({"m": {"input": -1, "output": 2}})"),
              QByteArray(R"({"m": {"input": 1}})"), QByteArray(R"({"m": {"input": 1, "output": 2,
                                                           "cached_input": "cheap"}})")}) {
            const QString bad = writeFile(dir, "bad.json", text);
            std::string error;
            QCOMPARE(loadPriceOverrides(bad.toStdString(), &error), 0);
            QVERIFY2(!error.empty(), text.constData());
            QVERIFY(priceOf("my-local-model")); // the earlier file's prices stay
        }
        std::string missing;
        QCOMPARE(loadPriceOverrides(dir.filePath("none.json").toStdString(), &missing), 0);
        QVERIFY(missing.find("cannot read") != std::string::npos);
    }
};

QTEST_MAIN(TestModelPrices)
#include "test_model_prices.moc"
