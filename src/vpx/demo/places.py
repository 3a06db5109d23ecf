"""Where demo businesses are: per state, real cities with the telephone area codes that serve them
(NANPA, overlays included) and their three-digit ZIP prefixes (USPS), so that a demo record's phone
and postal code agree with its city. Population weights make California busier than Wyoming."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class City:
    name: str
    area_codes: tuple[str, ...]
    zip_prefixes: tuple[str, ...]


def _cities(*rows: tuple[str, str, str]) -> tuple[City, ...]:
    return tuple(City(name, tuple(codes.split()), tuple(zips.split())) for name, codes, zips in rows)


# state: its cities as (name, area codes, ZIP prefixes)
STATE_CITIES: dict[str, tuple[City, ...]] = {
    "AL": _cities(
        ("Birmingham", "205 659", "352"), ("Montgomery", "334", "361"), ("Huntsville", "256 938", "358"),
        ("Mobile", "251", "366"),
    ),
    "AK": _cities(("Anchorage", "907", "995"), ("Fairbanks", "907", "997"), ("Juneau", "907", "998")),
    "AZ": _cities(
        ("Phoenix", "602", "850"), ("Tucson", "520", "857"), ("Mesa", "480", "852"), ("Scottsdale", "480", "852"),
    ),
    "AR": _cities(("Little Rock", "501", "722"), ("Fayetteville", "479", "727"), ("Fort Smith", "479", "729")),
    "CA": _cities(
        ("Los Angeles", "213 323 310", "900"), ("San Francisco", "415 628", "941"), ("San Diego", "619 858", "921"),
        ("Sacramento", "916 279", "958"), ("San Jose", "408 669", "951"), ("Fresno", "559", "937"),
        ("Oakland", "510 341", "946"),
    ),
    "CO": _cities(
        ("Denver", "303 720", "802"), ("Colorado Springs", "719", "809"), ("Boulder", "303 720", "803"),
        ("Aurora", "303 720", "800"),
    ),
    "CT": _cities(("Hartford", "860 959", "061"), ("New Haven", "203 475", "065"), ("Stamford", "203 475", "069")),
    "DE": _cities(("Wilmington", "302", "198"), ("Dover", "302", "199"), ("Newark", "302", "197")),
    "FL": _cities(
        ("Miami", "305 786", "331"), ("Orlando", "407 689", "328"), ("Tampa", "813 656", "336"),
        ("Jacksonville", "904", "322"), ("Tallahassee", "850 448", "323"),
    ),
    "GA": _cities(
        ("Atlanta", "404 470 678", "303"), ("Savannah", "912", "314"), ("Augusta", "706 762", "309"),
        ("Athens", "706 762", "306"),
    ),
    "HI": _cities(("Honolulu", "808", "968"), ("Hilo", "808", "967"), ("Kailua", "808", "967")),
    "ID": _cities(("Boise", "208 986", "837"), ("Idaho Falls", "208 986", "834"), ("Nampa", "208 986", "836")),
    "IL": _cities(
        ("Chicago", "312 773 872", "606"), ("Springfield", "217 447", "627"), ("Naperville", "630 331", "605"),
        ("Peoria", "309 861", "616"),
    ),
    "IN": _cities(("Indianapolis", "317 463", "462"), ("Fort Wayne", "260", "468"), ("Bloomington", "812 930", "474")),
    "IA": _cities(("Des Moines", "515", "503"), ("Cedar Rapids", "319", "524"), ("Iowa City", "319", "522")),
    "KS": _cities(("Wichita", "316", "672"), ("Topeka", "785", "666"), ("Lawrence", "785", "660")),
    "KY": _cities(("Louisville", "502", "402"), ("Lexington", "859", "405"), ("Bowling Green", "270 364", "421")),
    "LA": _cities(("New Orleans", "504", "701"), ("Baton Rouge", "225", "708"), ("Shreveport", "318", "711")),
    "ME": _cities(("Portland", "207", "041"), ("Bangor", "207", "044"), ("Augusta", "207", "043")),
    "MD": _cities(
        ("Baltimore", "410 443 667", "212"), ("Annapolis", "410 443", "214"), ("Rockville", "301 240", "208"),
    ),
    "MA": _cities(
        ("Boston", "617 857", "021"), ("Worcester", "508 774", "016"), ("Cambridge", "617 857", "021"),
        ("Springfield", "413", "011"),
    ),
    "MI": _cities(
        ("Detroit", "313", "482"), ("Grand Rapids", "616", "495"), ("Ann Arbor", "734", "481"),
        ("Lansing", "517", "489"),
    ),
    "MN": _cities(
        ("Minneapolis", "612", "554"), ("Saint Paul", "651", "551"), ("Duluth", "218", "558"),
        ("Rochester", "507", "559"),
    ),
    "MS": _cities(("Jackson", "601 769", "392"), ("Gulfport", "228", "395"), ("Hattiesburg", "601 769", "394")),
    "MO": _cities(
        ("St. Louis", "314 557", "631"), ("Kansas City", "816 975", "641"), ("Springfield", "417", "658"),
        ("Columbia", "573 235", "652"),
    ),
    "MT": _cities(("Billings", "406", "591"), ("Missoula", "406", "598"), ("Bozeman", "406", "597")),
    "NE": _cities(("Omaha", "402 531", "681"), ("Lincoln", "402 531", "685"), ("Kearney", "308", "688")),
    "NV": _cities(("Las Vegas", "702 725", "891"), ("Reno", "775", "895"), ("Henderson", "702 725", "890")),
    "NH": _cities(("Manchester", "603", "031"), ("Nashua", "603", "030"), ("Concord", "603", "033")),
    "NJ": _cities(
        ("Newark", "973 862", "071"), ("Jersey City", "201 551", "073"), ("Trenton", "609 640", "086"),
        ("Princeton", "609 640", "085"),
    ),
    "NM": _cities(("Albuquerque", "505", "871"), ("Santa Fe", "505", "875"), ("Las Cruces", "575", "880")),
    "NY": _cities(
        ("New York", "212 646 332", "100"), ("Brooklyn", "718 347 929", "112"), ("Buffalo", "716", "142"),
        ("Albany", "518 838", "122"), ("Rochester", "585", "146"),
    ),
    "NC": _cities(
        ("Charlotte", "704 980", "282"), ("Raleigh", "919 984", "276"), ("Durham", "919 984", "277"),
        ("Greensboro", "336 743", "274"),
    ),
    "ND": _cities(("Fargo", "701", "581"), ("Bismarck", "701", "585"), ("Grand Forks", "701", "582")),
    "OH": _cities(
        ("Columbus", "614 380", "432"), ("Cleveland", "216", "441"), ("Cincinnati", "513 283", "452"),
        ("Toledo", "419 567", "436"),
    ),
    "OK": _cities(("Oklahoma City", "405 572", "731"), ("Tulsa", "918 539", "741"), ("Norman", "405 572", "730")),
    "OR": _cities(
        ("Portland", "503 971", "972"), ("Eugene", "541 458", "974"), ("Salem", "503 971", "973"),
        ("Bend", "541 458", "977"),
    ),
    "PA": _cities(
        ("Philadelphia", "215 267 445", "191"), ("Pittsburgh", "412 878", "152"), ("Harrisburg", "717 223", "171"),
        ("Allentown", "610 484", "181"),
    ),
    "RI": _cities(("Providence", "401", "029"), ("Warwick", "401", "028"), ("Newport", "401", "028")),
    "SC": _cities(("Columbia", "803 839", "292"), ("Charleston", "843 854", "294"), ("Greenville", "864", "296")),
    "SD": _cities(("Sioux Falls", "605", "571"), ("Rapid City", "605", "577"), ("Pierre", "605", "575")),
    "TN": _cities(
        ("Nashville", "615 629", "372"), ("Memphis", "901", "381"), ("Knoxville", "865", "379"),
        ("Chattanooga", "423", "374"),
    ),
    "TX": _cities(
        ("Houston", "713 281 832 346", "770"), ("Dallas", "214 469 972", "752"), ("Austin", "512 737", "787"),
        ("San Antonio", "210 726", "782"), ("Fort Worth", "817 682", "761"), ("El Paso", "915", "799"),
    ),
    "UT": _cities(("Salt Lake City", "801 385", "841"), ("Provo", "801 385", "846"), ("Ogden", "801 385", "844")),
    "VT": _cities(("Burlington", "802", "054"), ("Montpelier", "802", "056"), ("Rutland", "802", "057")),
    "VA": _cities(
        ("Richmond", "804", "232"), ("Arlington", "703 571", "222"), ("Virginia Beach", "757 948", "234"),
        ("Norfolk", "757 948", "235"),
    ),
    "WA": _cities(
        ("Seattle", "206 564", "981"), ("Spokane", "509", "992"), ("Tacoma", "253", "984"), ("Bellevue", "425", "980"),
    ),
    "WV": _cities(("Charleston", "304 681", "253"), ("Morgantown", "304 681", "265"), ("Huntington", "304 681", "257")),
    "WI": _cities(("Milwaukee", "414", "532"), ("Madison", "608", "537"), ("Green Bay", "920", "543")),
    "WY": _cities(("Cheyenne", "307", "820"), ("Casper", "307", "826"), ("Laramie", "307", "820")),
    "DC": _cities(("Washington", "202 771", "200")),
}  # fmt: skip

# Rough population weights, so California and Texas have more businesses than Wyoming.
STATE_WEIGHTS: dict[str, int] = {
    "CA": 39, "TX": 30, "FL": 22, "NY": 20, "PA": 13, "IL": 13, "OH": 12, "GA": 11, "NC": 11, "MI": 10,
    "NJ": 9, "VA": 9, "WA": 8, "AZ": 7, "MA": 7, "TN": 7, "IN": 7, "MD": 6, "MO": 6, "WI": 6, "CO": 6,
    "MN": 6, "SC": 5, "AL": 5, "LA": 5, "KY": 5, "OR": 4, "OK": 4, "CT": 4, "UT": 3, "IA": 3, "NV": 3,
    "AR": 3, "MS": 3, "KS": 3, "NM": 2, "NE": 2, "ID": 2, "WV": 2, "HI": 2, "NH": 2, "ME": 2, "RI": 1,
    "MT": 1, "DE": 1, "SD": 1, "ND": 1, "AK": 1, "DC": 1, "VT": 1, "WY": 1,
}  # fmt: skip
