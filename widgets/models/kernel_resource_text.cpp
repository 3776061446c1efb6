#include "widgets/models/kernel_resource_text.h"

#include <QRegularExpression>
#include <QStringList>

namespace kwb::ui {

QString byteSizeText(long bytes) {
    if (bytes < 1024)
        return QStringLiteral("%1 B").arg(bytes);
    return QStringLiteral("%1 KB").arg(static_cast<double>(bytes) / 1024.0, 0, 'f', 1);
}

QString kernelResourceSummary(const kwb::diagnostics::ResourceUsage& usage) {
    const QString dot = QStringLiteral(" · ");
    QString smem = byteSizeText(usage.staticSharedBytes) + QStringLiteral(" smem");
    if (usage.usesDynamicShared)
        smem += QStringLiteral(" + dynamic");
    QStringList parts{QStringLiteral("%1 regs").arg(usage.registers), smem,
                      byteSizeText(usage.spillStoreBytes + usage.spillLoadBytes) +
                          QStringLiteral(" spill")};
    // Local memory that is not spills is a local array: worth seeing, often a surprise.
    if (usage.localBytes > 0)
        parts << byteSizeText(usage.localBytes) + QStringLiteral(" stack");
    parts << QStringLiteral("≤%1 thr%2")
                 .arg(usage.maxThreadsPerBlock)
                 .arg(usage.maxThreadsFromLaunchBounds ? QStringLiteral(" (launch bounds)")
                                                       : QString());
    return parts.join(dot);
}

QString kernelIdentifier(const std::string& demangledName) {
    QString name = QString::fromStdString(demangledName);
    // The one parenthesis that is not a parameter list.
    name.remove(QStringLiteral("(anonymous namespace)::"));
    // Drop the parameter list, then template arguments, then scopes and any return type.
    int depth = 0;
    for (int i = 0; i < name.size(); ++i) {
        const QChar c = name[i];
        if (c == u'<')
            ++depth;
        else if (c == u'>')
            --depth;
        else if (c == u'(' && depth == 0) {
            name.truncate(i);
            break;
        }
    }
    QString plain;
    depth = 0;
    for (const QChar c : name) {
        if (c == u'<')
            ++depth;
        else if (c == u'>')
            --depth;
        else if (depth == 0)
            plain += c;
    }
    plain = plain.trimmed();
    const int scope = plain.lastIndexOf(QStringLiteral("::"));
    if (scope >= 0)
        plain = plain.mid(scope + 2);
    const int space = plain.lastIndexOf(u' ');
    if (space >= 0)
        plain = plain.mid(space + 1);
    return plain;
}

int kernelDeclarationLine(const QString& source, const QString& identifier) {
    if (identifier.isEmpty())
        return -1;
    const QStringList lines = source.split(u'\n');
    const QRegularExpression call(
        QStringLiteral("\\b%1\\s*(<[^;{]*>)?\\s*\\(").arg(QRegularExpression::escape(identifier)));
    constexpr int kLookBack = 3;
    for (int i = 0; i < lines.size(); ++i) {
        if (!call.match(lines[i]).hasMatch())
            continue;
        for (int back = i; back >= 0 && back >= i - kLookBack; --back) {
            if (lines[back].contains(QStringLiteral("__global__")))
                return i;
            // A statement or block ending in between means this is not one declaration.
            if (back != i && (lines[back].contains(u';') || lines[back].contains(u'}')))
                break;
        }
    }
    return -1;
}

} // namespace kwb::ui
