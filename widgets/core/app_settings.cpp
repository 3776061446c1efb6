#include "widgets/core/app_settings.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

namespace kwb::ui {
namespace {
const char* kPython = "python/interpreter";
const char* kWorkspaceRoot = "workspace/root";
const char* kTheme = "ui/theme";
const char* kLastTask = "ui/lastTask";
const char* kRecentTraces = "ui/recentTraces";
constexpr int kMaxRecentTraces = 8;
const char* kVerifyOnSave = "editor/verifyOnSave";
const char* kGeometry = "ui/geometry";
const char* kShowWelcome = "ui/showWelcomeAtStart";
const char* kAgentKind = "agent/provider";
const char* kAgentBaseUrl = "agent/baseUrl";
const char* kAgentModel = "agent/model";
const char* kAgentKeyEnv = "agent/apiKeyEnv";
const char* kState = "ui/dockState";
} // namespace

QString themeName(Theme theme) {
    return theme == Theme::Dark ? QStringLiteral("dark") : QStringLiteral("light");
}

Theme themeFromName(const QString& name) {
    return name.compare(QLatin1String("light"), Qt::CaseInsensitive) == 0 ? Theme::Light
                                                                          : Theme::Dark;
}

AppSettings::AppSettings() : settings_(new QSettings()) {}

AppSettings::AppSettings(const QString& iniFile)
    : settings_(new QSettings(iniFile, QSettings::IniFormat)) {}

AppSettings::~AppSettings() {
    delete settings_;
}

QString AppSettings::modelPricesFile() const {
    return QFileInfo(settings_->fileName()).dir().filePath(QStringLiteral("model-prices.json"));
}

QString AppSettings::pythonInterpreter() const {
    return settings_->value(kPython).toString();
}

void AppSettings::setPythonInterpreter(const QString& path) {
    settings_->setValue(kPython, path);
}

QString AppSettings::defaultWorkspaceRoot() {
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation))
        .filePath("workspaces");
}

QString AppSettings::workspaceRoot() const {
    return settings_->value(kWorkspaceRoot, defaultWorkspaceRoot()).toString();
}

void AppSettings::setWorkspaceRoot(const QString& path) {
    settings_->setValue(kWorkspaceRoot, path);
}

Theme AppSettings::theme() const {
    return themeFromName(settings_->value(kTheme, "dark").toString());
}

void AppSettings::setTheme(Theme theme) {
    settings_->setValue(kTheme, themeName(theme));
}

bool AppSettings::showWelcomeAtStart() const {
    return settings_->value(kShowWelcome, true).toBool();
}

void AppSettings::setShowWelcomeAtStart(bool show) {
    settings_->setValue(kShowWelcome, show);
}

AppSettings::AgentProvider AppSettings::agentProvider() const {
    return {settings_->value(kAgentKind).toString(), settings_->value(kAgentBaseUrl).toString(),
            settings_->value(kAgentModel).toString(), settings_->value(kAgentKeyEnv).toString()};
}

void AppSettings::setAgentProvider(const AgentProvider& provider) {
    settings_->setValue(kAgentKind, provider.kind);
    settings_->setValue(kAgentBaseUrl, provider.baseUrl);
    settings_->setValue(kAgentModel, provider.model);
    settings_->setValue(kAgentKeyEnv, provider.apiKeyEnv);
}

bool AppSettings::verifyOnSave() const {
    return settings_->value(kVerifyOnSave, true).toBool();
}

void AppSettings::setVerifyOnSave(bool enabled) {
    settings_->setValue(kVerifyOnSave, enabled);
}

QString AppSettings::lastTaskPath() const {
    return settings_->value(kLastTask).toString();
}

void AppSettings::setLastTaskPath(const QString& path) {
    settings_->setValue(kLastTask, path);
}

QStringList AppSettings::recentTraces() const {
    return settings_->value(kRecentTraces).toStringList();
}

void AppSettings::addRecentTrace(const QString& path) {
    QStringList recent = recentTraces();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecentTraces)
        recent.removeLast();
    settings_->setValue(kRecentTraces, recent);
}

void AppSettings::clearRecentTraces() {
    settings_->remove(kRecentTraces);
}

QByteArray AppSettings::windowGeometry() const {
    return settings_->value(kGeometry).toByteArray();
}

QByteArray AppSettings::windowState() const {
    return settings_->value(kState).toByteArray();
}

void AppSettings::setWindowLayout(const QByteArray& geometry, const QByteArray& state) {
    settings_->setValue(kGeometry, geometry);
    settings_->setValue(kState, state);
}

void AppSettings::sync() {
    settings_->sync();
}

} // namespace kwb::ui
