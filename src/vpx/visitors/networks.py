"""Which networks are negatives: the big access (cable, DSL, fibre, satellite), mobile and
cloud/hosting/VPN networks, whose addresses say "a household, a phone or a machine", never "this
business".

Everything not listed here stays None (``unknown``): an unknown network is never a negative. The name
rules are deliberately narrow for that reason; a missed ISP costs a visit an ``unknown`` reason, a
business taken for an ISP loses its visits.

The AS numbers are public knowledge of the networks (their operators' own registrations as published
in the regional registries' WHOIS and in every routing table); nothing is downloaded. Reviewed
2026-11; add a network when its traffic shows up as ``unknown`` in volume.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

NetworkKind = Literal["isp", "hosting"]

# Access networks: cable, DSL, fibre, satellite and mobile carriers, where visitors are households
# and phones.
ISP: dict[int, str] = {
    # United States
    7922: "Comcast Cable",
    20115: "Charter (Spectrum)",
    11427: "Charter (Spectrum, ex-Time Warner Cable Texas)",
    10796: "Charter (Spectrum, ex-Time Warner Cable Midwest)",
    11351: "Charter (Spectrum, ex-Time Warner Cable Northeast)",
    12271: "Charter (Spectrum, ex-Time Warner Cable New York City)",
    20001: "Charter (Spectrum, ex-Time Warner Cable Pacific West)",
    33363: "Charter (Spectrum, ex-Bright House Networks)",
    7843: "Charter (Spectrum, ex-Time Warner Cable Road Runner)",
    7018: "AT&T",
    7132: "AT&T Internet (ex-SBC)",
    20057: "AT&T Mobility",
    701: "Verizon (Fios and business lines)",
    6167: "Verizon Wireless",
    22394: "Verizon Wireless",
    21928: "T-Mobile USA",
    10507: "Sprint (T-Mobile)",
    22773: "Cox Communications",
    209: "CenturyLink (Lumen)",
    5650: "Frontier Communications",
    6128: "Optimum (Altice, ex-Cablevision)",
    19108: "Optimum (Altice, ex-Suddenlink)",
    30036: "Mediacom",
    11492: "Sparklight (Cable One)",
    12083: "WOW!",
    7155: "Viasat",
    6621: "HughesNet",
    14593: "Starlink (SpaceX)",
    # Canada
    812: "Rogers",
    577: "Bell Canada",
    852: "TELUS",
    6327: "Shaw",
    5769: "Vidéotron",
    # United Kingdom and Ireland
    2856: "BT",
    5089: "Virgin Media",
    5607: "Sky UK",
    13285: "TalkTalk",
    12576: "EE",
    25135: "Vodafone UK",
    35228: "O2 UK",
    # Germany, France, Spain, Italy, the Netherlands
    3320: "Deutsche Telekom",
    3209: "Vodafone Germany",
    31334: "Vodafone Germany (ex-Kabel Deutschland)",
    6805: "Telefónica Germany (O2)",
    8881: "1&1 Versatel",
    3215: "Orange France",
    12322: "Free (Iliad)",
    5410: "Bouygues Telecom",
    15557: "SFR",
    3352: "Telefónica Spain (Movistar)",
    12479: "Orange Spain",
    12430: "Vodafone Spain",
    3269: "TIM (Telecom Italia)",
    30722: "Vodafone Italy",
    1267: "WINDTRE",
    1136: "KPN",
    33915: "Vodafone Ziggo",
    # Asia-Pacific and Latin America
    1221: "Telstra",
    4804: "Optus",
    7545: "TPG Telecom",
    55836: "Reliance Jio",
    45609: "Bharti Airtel (mobile)",
    9829: "BSNL",
    4713: "NTT OCN",
    2516: "KDDI",
    17676: "SoftBank",
    4766: "Korea Telecom",
    9318: "SK Broadband",
    4134: "China Telecom",
    4837: "China Unicom",
    9808: "China Mobile",
    8151: "Telmex (Uninet)",
    28573: "Claro Brasil",
    18881: "Vivo (Telefônica Brasil)",
}

# Cloud, hosting, CDN and VPN networks, where visitors are machines, proxies and VPN exits.
# Google's own AS 15169 is here, next to Google Cloud's 396982: from it come Googlebot, Google's image
# and translation proxies and older Cloud and App Engine addresses, not a business's people. Google as
# a business can still be identified: an operator's range for it is more specific and wins, and
# reverse DNS is tried before a negative. Microsoft's 8075 and Amazon's 16509 are here by the same
# reasoning (Azure, AWS).
HOSTING: dict[int, str] = {
    16509: "Amazon (AWS)",
    14618: "Amazon (AWS)",
    15169: "Google",
    396982: "Google Cloud",
    8075: "Microsoft (Azure)",
    31898: "Oracle Cloud",
    45102: "Alibaba Cloud",
    37963: "Alibaba Cloud (China)",
    132203: "Tencent Cloud",
    45090: "Tencent Cloud (China)",
    136907: "Huawei Cloud",
    55990: "Huawei Cloud (China)",
    14061: "DigitalOcean",
    16276: "OVHcloud",
    24940: "Hetzner",
    63949: "Linode (Akamai)",
    20473: "Vultr",
    51167: "Contabo",
    12876: "Scaleway",
    8560: "IONOS",
    60781: "Leaseweb Netherlands",
    30633: "Leaseweb USA",
    9009: "M247 (VPN exits)",
    60068: "Datacamp / CDN77 (VPN exits)",
    36352: "ColoCrossing",
    53667: "FranTech (BuyVM)",
    8100: "QuadraNet",
    40676: "Psychz Networks",
    49981: "WorldStream",
    46606: "Unified Layer (Bluehost)",
    26496: "GoDaddy",
    13335: "Cloudflare (WARP, Workers)",
    54113: "Fastly",
    20940: "Akamai",
    16625: "Akamai",
    36183: "Akamai (iCloud Private Relay)",
    19551: "Imperva Incapsula",
}

# A name rule never overrides these: an organisation so named is a business (or a city: Mobile, AL),
# whatever else its name says ("First Bank Mobile Banking", "Mobile County Schools").
_BUSINESS_WORDS = re.compile(
    r"\b(?:bank|banking|bancorp|credit union|insurance|university|college|school|schools|hospital|clinic|"
    r"health|city of|county|state of|government|ministry|department)\b",
    re.IGNORECASE,
)

# Whole words only (\b): "Cloudera" is not a cloud, "Serverius" not a server. A word that many
# businesses also use ("cloud", "mobile", "cable") counts only in a phrase that names the trade.
_NAME_RULES: tuple[tuple[NetworkKind, re.Pattern[str]], ...] = (
    (
        "hosting",
        re.compile(
            r"\b(?:hosting|webhosting|vps|colo|colocation|data ?cent(?:er|re)s?|dedicated servers?|"
            r"virtual servers?|servers|vpn|cloud (?:computing|hosting|infrastructure|servers?|provider))\b",
            re.IGNORECASE,
        ),
    ),
    (
        "isp",
        re.compile(
            r"\b(?:telecom|telecoms|telecommunications?|telekom|telecomunica\w*|broadband|isp|dsl|cablevision|"
            r"cable (?:tv|television|communications|internet|broadband|operator)|wireless|cellular|t-mobile|"
            r"mobile (?:communications|telecom|telecommunications|telesystems|networks?|operator|broadband))\b",
            re.IGNORECASE,
        ),
    ),
)


@lru_cache(maxsize=1 << 16)
def classify(asn: int | None, organisation: str | None) -> NetworkKind | None:
    """``isp`` or ``hosting`` for a network listed above by AS number or plainly named as such
    (``… Broadband``, ``… Hosting``); None for every other network, which is never a negative."""
    if asn is not None:
        if asn in HOSTING:
            return "hosting"
        if asn in ISP:
            return "isp"
    if not organisation or _BUSINESS_WORDS.search(organisation):
        return None
    for kind, rule in _NAME_RULES:
        if rule.search(organisation):
            return kind
    return None
