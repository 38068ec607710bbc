// scim_time.cpp - SCIM's date-time form (see allot/scim_model.hpp).
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include "allot/scim_model.hpp"

namespace allot::scim {

std::string format_time(int64_t unix_seconds)
{
    std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::optional<int64_t> parse_time(std::string_view text)
{
    // YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)
    if (text.size() < 20 || text.size() > 40) return std::nullopt;
    auto digits = [&](size_t pos, size_t n) -> std::optional<int> {
        int v = 0;
        for (size_t i = pos; i < pos + n; ++i) {
            if (text[i] < '0' || text[i] > '9') return std::nullopt;
            v = v * 10 + (text[i] - '0');
        }
        return v;
    };
    auto y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2), h = digits(11, 2),
         mi = digits(14, 2), s = digits(17, 2);
    if (!y || !mo || !d || !h || !mi || !s || text[4] != '-' || text[7] != '-' ||
        (text[10] != 'T' && text[10] != 't') || text[13] != ':' || text[16] != ':')
        return std::nullopt;
    if (*mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *s > 60)
        return std::nullopt;
    size_t pos = 19;
    if (pos < text.size() && text[pos] == '.') {
        ++pos;
        const size_t start = pos;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
        if (pos == start) return std::nullopt;
    }
    int64_t offset = 0;
    if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z') && pos + 1 == text.size()) {
    } else if (pos + 6 == text.size() && (text[pos] == '+' || text[pos] == '-') &&
               text[pos + 3] == ':') {
        auto oh = digits(pos + 1, 2), om = digits(pos + 4, 2);
        if (!oh || !om || *oh > 23 || *om > 59) return std::nullopt;
        offset = (*oh * 3600 + *om * 60) * (text[pos] == '+' ? 1 : -1);
    } else {
        return std::nullopt;
    }
    // days_from_civil (H. Hinnant), avoids timegm's dependence on TZ state.
    int yy = *y - (*mo <= 2);
    const int era = (yy >= 0 ? yy : yy - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(yy - era * 400);
    const unsigned mp = static_cast<unsigned>(*mo + (*mo > 2 ? -3 : 9));
    const unsigned doy = (153 * mp + 2) / 5 + static_cast<unsigned>(*d) - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    const int64_t days = static_cast<int64_t>(era) * 146097 + static_cast<int64_t>(doe) - 719468;
    return days * 86400 + *h * 3600 + *mi * 60 + *s - offset;
}

}  // namespace allot::scim
