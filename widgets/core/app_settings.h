#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

class QSettings;

namespace kwb::ui {

enum class Theme { Light, Dark };

QString themeName(Theme theme);
Theme themeFromName(const QString& name);

// The one owner of persistent user preferences. Every read goes through here so defaults live
// in one place; widgets never touch QSettings keys directly.
class AppSettings {
public:
    AppSettings();                                // the application's QSettings
    explicit AppSettings(const QString& iniFile); // a specific file (tests, portable installs)
    ~AppSettings();
    AppSettings(const AppSettings&) = delete;
    AppSettings& operator=(const AppSettings&) = delete;

    // Empty means auto-detect (KWB_PYTHON, the project venv, then PATH).
    QString pythonInterpreter() const;
    void setPythonInterpreter(const QString& path);

    QString workspaceRoot() const;
    void setWorkspaceRoot(const QString& path);
    static QString defaultWorkspaceRoot();

    Theme theme() const;
    void setTheme(Theme theme);

    QString lastTaskPath() const;
    void setLastTaskPath(const QString& path);

    // Trace files opened (File > Open Trace, drops, --trace), newest first, at most eight.
    QStringList recentTraces() const;
    void addRecentTrace(const QString& path);
    void clearRecentTraces();

    // Ctrl+S in the candidate editors also verifies and profiles the workspace (fast path).
    bool verifyOnSave() const;
    void setVerifyOnSave(bool enabled);

    // The welcome page opens at start until the user turns it off.
    bool showWelcomeAtStart() const;
    void setShowWelcomeAtStart(bool show);

    // The LLM provider agents start with (the welcome page sets it; the Agent tab's form starts
    // from it). The key itself is never stored: only the variable that holds it.
    struct AgentProvider {
        QString kind; // providerKindName(): "openai", "anthropic", "local"; empty: none chosen
        QString baseUrl;
        QString model;
        QString apiKeyEnv;
    };
    AgentProvider agentProvider() const;
    void setAgentProvider(const AgentProvider& provider);

    QByteArray windowGeometry() const;
    QByteArray windowState() const;
    void setWindowLayout(const QByteArray& geometry, const QByteArray& state);

    // The user's model prices (model_prices.h), beside the settings file: model-prices.json.
    QString modelPricesFile() const;

    void sync();

private:
    QSettings* settings_;
};

} // namespace kwb::ui
