"""Word lists for the demo catalogue: per vertical, its trades (a specialty, the words a business of
that trade puts in its name, the licences it holds), the contractor licence classes per state, and
the names and streets businesses are made of.

A trade ties a record together: a "Plumbing" business has the specialty Plumbing and a plumbing
licence (in California the CSLB's C-36 class), never a roofer's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Trade:
    specialty: str
    names: tuple[str, ...]  # words in the business's name, after the family or place name
    licences: tuple[str, ...]  # licence types; "@kind" is a contractor class, named per state (CONTRACTOR_CLASSES)


def _trades(*rows: str) -> tuple[Trade, ...]:
    """Trades from "specialty; name word | name word; licence | licence" rows."""
    trades = []
    for row in rows:
        specialty, names, licences = (part.strip() for part in row.split(";"))
        names_ = tuple(name.strip() for name in names.split("|"))
        trades.append(Trade(specialty, names_, tuple(licence.strip() for licence in licences.split("|"))))
    return tuple(trades)


VERTICAL_TRADES: dict[str, tuple[Trade, ...]] = {
    "accounting": _trades(
        "Tax Preparation; Tax Services | Tax Group; Enrolled Agent | Certified Public Accountant",
        "Audit and Assurance; CPA Firm | Accounting; Certified Public Accountant",
        "Forensic Accounting; Forensic Accounting | CPA Firm; Certified Public Accountant",
        "Bookkeeping; Bookkeeping; Business License",
        "Payroll Services; Payroll Services | Payroll; Business License",
    ),
    "advertising-marketing": _trades(
        "Digital Advertising; Digital Marketing | Media; Business License",
        "Brand Strategy; Creative Agency | Branding; Business License",
        "Search Engine Marketing; Search Marketing | Digital; Business License",
        "Public Relations; Public Relations | Communications; Business License",
    ),
    "agriculture": _trades(
        "Row Crops; Farms; Pesticide Applicator",
        "Orchards; Orchards; Pesticide Applicator",
        "Dairy Farming; Dairy | Dairy Farm; Grade A Dairy Permit",
        "Organic Produce; Organic Farms | Produce; Organic Certification",
        "Cattle Ranching; Ranch | Cattle Company; Livestock Brand Registration",
        "Farm Supply; Agri Supply | Farm Supply; Agricultural Chemicals Dealer",
    ),
    "automotive": _trades(
        "Collision Repair; Collision Center | Auto Body; Automotive Repair Dealer",
        "Transmission Repair; Transmission | Auto Repair; Automotive Repair Dealer",
        "Tire and Brake; Tire and Brake; Automotive Repair Dealer",
        "Auto Detailing; Auto Detailing | Detail Shop; Business License",
        "Used Car Sales; Motors | Auto Sales; Vehicle Dealer",
    ),
    "aviation-aerospace": _trades(
        "Aircraft Maintenance; Aero Services | Aviation; FAA Part 145 Repair Station",
        "Charter Flights; Air Charter | Jet Charter; FAA Part 135 Operator",
        "Avionics; Avionics; FAA Part 145 Repair Station",
        "Flight Training; Flight School | Flight Academy; FAA Part 141 Pilot School",
    ),
    "banking": _trades(
        "Commercial Lending; Bank | Community Bank; State Bank Charter",
        "Mortgage Lending; Savings Bank | Mortgage Bank; State Bank Charter",
        "Small Business Banking; Community Bank | Bank; State Bank Charter",
        "Member Banking; Credit Union; Credit Union Charter",
        "Wealth Management; Bank & Trust | Trust Company; Trust Company Charter",
    ),
    "beauty-personal-care": _trades(
        "Hair Styling; Salon | Hair Studio; Cosmetology Establishment",
        "Esthetics; Day Spa | Skin Studio; Cosmetology Establishment",
        "Nail Care; Nail Studio | Nail Salon; Cosmetology Establishment",
        "Barbering; Barbershop | Barber Co; Barber Shop License",
    ),
    "biotech-pharma": _trades(
        "Drug Discovery; Therapeutics | Biosciences; Drug Manufacturer",
        "Clinical Research; Clinical Research | Biosciences; Clinical Laboratory (CLIA)",
        "Biologics; Biologics | Bio; Drug Manufacturer",
        "Compounding Pharmacy; Compounding Pharmacy | Pharmacy; Pharmacy Permit",
    ),
    "construction": _trades(
        "General Building; Construction | Builders; @general",
        "Concrete; Concrete; @concrete",
        "Framing; Framing | Carpentry; @framing",
        "Commercial Construction; Contracting | Construction; @general",
        "Painting; Painting; @painting",
        "Flooring; Flooring; @flooring",
    ),
    "consulting": _trades(
        "Management Consulting; Consulting | Advisors; Business License",
        "Operations Consulting; Operations Partners | Consulting; Business License",
        "IT Strategy; Strategy Partners | Technology Advisors; Business License",
        "Change Management; Change Partners | Consulting; Business License",
    ),
    "cybersecurity": _trades(
        "Penetration Testing; Security Labs | Cyber; Business License",
        "Managed Detection; Cyber Defense; Business License",
        "Compliance Audits; InfoSec | Compliance Partners; Business License",
        "Incident Response; Threat Intelligence | Incident Response; Business License",
    ),
    "dental": _trades(
        "General Practice Dentistry; Dental | Family Dentistry | Dental Care; Dentist (DDS) | Dentist (DMD)",
        "Orthodontics; Orthodontics; Dentist (DDS) | Dentist (DMD)",
        "Pediatric Dentistry; Pediatric Dentistry | Kids Dental; Dentist (DDS) | Dentist (DMD)",
        "Oral Surgery; Oral Surgery; Dentist (DDS) | Dentist (DMD)",
        "Endodontics; Endodontics; Dentist (DDS) | Dentist (DMD)",
        "Periodontics; Periodontics; Dentist (DDS) | Dentist (DMD)",
    ),
    "ecommerce": _trades(
        "Apparel Online; Apparel | Outfitters Online; Seller's Permit",
        "Home Goods Online; Home Goods | Home Shop; Seller's Permit",
        "Subscription Boxes; Subscription Box | Box Co; Seller's Permit",
        "Marketplace Seller; Direct | Goods; Seller's Permit",
    ),
    "education": _trades(
        "Test Preparation; Test Prep | Tutoring; Business License",
        "Early Childhood Education; Preschool | Early Learning Center; Child Care Center",
        "Vocational Training; Trade School | Career Institute; Private Postsecondary Registration",
        "Language School; Language School | Language Academy; Private Postsecondary Registration",
        "Private K-12 School; Academy | School; Private School Registration",
    ),
    "energy-utilities": _trades(
        "Electric Utility; Power | Electric Cooperative; Public Utility Certificate",
        "Natural Gas Distribution; Gas Company | Natural Gas; Public Utility Certificate",
        "Energy Efficiency; Energy Services | Energy; Business License",
        "Fuel Distribution; Fuel | Propane; Fuel Dealer License",
    ),
    "engineering": _trades(
        "Civil Engineering; Civil Engineers | Engineering; Professional Engineer (PE)",
        "Structural Engineering; Structural Engineers | Structural; Professional Engineer (PE)",
        "Mechanical Engineering; Mechanical Engineers | MEP Engineering; Professional Engineer (PE)",
        "Geotechnical Engineering; Geotechnical | Geotech; Professional Engineer (PE)",
    ),
    "entertainment-media": _trades(
        "Film Production; Films | Productions; Business License",
        "Event Production; Events | Productions; Business License",
        "Music Recording; Studios | Recording; Business License",
        "Broadcast Media; Media | Broadcasting; Business License",
    ),
    "environmental-services": _trades(
        "Asbestos Abatement; Abatement | Environmental; @abatement",
        "Waste Hauling; Waste Services | Disposal; Waste Hauler Permit",
        "Soil Remediation; Remediation | Environmental; Hazardous Substance Removal",
        "Recycling Services; Recycling; Recycling Facility Permit",
    ),
    "financial-services": _trades(
        "Financial Planning; Financial | Wealth Advisors; Registered Investment Adviser",
        "Investment Advisory; Capital | Investments; Registered Investment Adviser",
        "Retirement Planning; Retirement Planning | Wealth Advisors; Registered Investment Adviser",
        "Securities Brokerage; Securities | Capital Markets; Securities Broker-Dealer",
    ),
    "fitness-wellness": _trades(
        "Personal Training; Fitness | Gym; Health Club Registration",
        "Yoga; Yoga Studio | Yoga; Business License",
        "Pilates; Pilates; Business License",
        "Martial Arts; Martial Arts | Karate; Business License",
    ),
    "food-beverage": _trades(
        "Craft Brewing; Brewing | Brewery; Brewery License",
        "Wholesale Bakery; Bakery | Baking Co; Food Processor License",
        "Food Processing; Foods | Provisions; Food Processor License",
        "Coffee Roasting; Coffee Roasters | Coffee; Food Processor License",
    ),
    "government": _trades(
        "Public Works; Public Works; Government Entity",
        "Parks and Recreation; Parks and Recreation; Government Entity",
        "Planning Department; Planning Department; Government Entity",
        "Water Authority; Water Authority | Water District; Government Entity",
    ),
    "healthcare": _trades(
        "Family Medicine; Family Medicine | Family Health; Medical Doctor (MD) | Doctor of Osteopathic Medicine (DO) | Nurse Practitioner",
        "Internal Medicine; Internal Medicine | Medical Group; Medical Doctor (MD)",
        "Cardiology; Cardiology | Heart Center; Medical Doctor (MD)",
        "Pediatrics; Pediatrics | Children's Clinic; Medical Doctor (MD)",
        "Dermatology; Dermatology | Skin Clinic; Medical Doctor (MD)",
        "Orthopedic Surgery; Orthopedics | Orthopedic Center; Medical Doctor (MD)",
        "Physical Therapy; Physical Therapy | Rehab; Physical Therapist",
        "Urgent Care; Urgent Care; Medical Doctor (MD)",
    ),
    # Plumbing first: the first rows of a catalogue give each vertical its trades in this order.
    "home-services": _trades(
        "Plumbing; Plumbing | Plumbing & Drain; @plumbing",
        "HVAC; Heating & Air | Heating and Cooling | HVAC; @hvac",
        "Electrical; Electric | Electrical Services; @electrical",
        "Roofing; Roofing | Roofing & Gutters; @roofing",
        "Landscaping; Landscaping | Lawn & Landscape; @landscaping",
        "Pest Control; Pest Control | Exterminating; @pest",
        "Pool Service; Pool Service | Pools; @pool",
    ),
    "hospitality": _trades(
        "Boutique Hotel; Hotel; Lodging License",
        "Bed and Breakfast; Inn | Bed & Breakfast; Lodging License",
        "Resort; Resort | Lodge; Lodging License",
        "Event Venue; Event Center | Ballroom; Business License",
    ),
    "hr-staffing": _trades(
        "Temporary Staffing; Staffing | Workforce; Employment Agency License",
        "Executive Search; Executive Search | Recruiting; Employment Agency License",
        "Payroll Outsourcing; HR Solutions | Payroll Solutions; PEO Registration",
        "Healthcare Staffing; Medical Staffing | Nurse Staffing; Nurse Staffing Agency License",
    ),
    "insurance": _trades(
        "Property and Casualty; Insurance | Insurance Agency; Insurance Producer",
        "Life and Health; Life & Health Insurance | Benefits; Insurance Producer",
        "Commercial Lines; Commercial Insurance | Risk Advisors; Insurance Producer",
        "Auto Insurance; Auto Insurance | Insurance Agency; Insurance Producer",
    ),
    "it-services": _trades(
        "Managed IT Services; IT Solutions | Managed IT; Business License",
        "Network Installation; Networks | Network Solutions; @low_voltage",
        "Cloud Migration; Cloud Services | Technologies; Business License",
        "Help Desk Support; Computer Services | Tech Support; Business License",
    ),
    "legal": _trades(
        "Personal Injury; Injury Lawyers | Law Firm; Attorney at Law",
        "Family Law; Family Law | Law Offices; Attorney at Law",
        "Estate Planning; Estate Planning | Law Group; Attorney at Law",
        "Business Law; Business Law | Attorneys; Attorney at Law",
        "Criminal Defense; Criminal Defense | Defense Attorneys; Attorney at Law",
        "Immigration Law; Immigration Law | Law Offices; Attorney at Law",
    ),
    "logistics-transportation": _trades(
        "Freight Brokerage; Freight | Logistics; Freight Broker Authority",
        "Long Haul Trucking; Trucking | Transport; USDOT Motor Carrier",
        "Warehousing; Warehousing | Distribution Center; Business License",
        "Last Mile Delivery; Delivery | Courier; USDOT Motor Carrier",
    ),
    "manufacturing": _trades(
        "Metal Fabrication; Fabrication | Metal Works; Manufacturer Registration",
        "CNC Machining; Machine Works | Precision Machining; Manufacturer Registration",
        "Plastics Molding; Plastics | Molding; Manufacturer Registration",
        "Industrial Equipment; Industries | Equipment; Manufacturer Registration",
    ),
    "medical-devices": _trades(
        "Durable Medical Equipment; Medical Supply | Home Medical; DME Supplier",
        "Surgical Instruments; Surgical | Surgical Supply; Device Manufacturer Registration",
        "Diagnostic Imaging; Diagnostics | Imaging; Device Manufacturer Registration",
        "Orthotics and Prosthetics; Orthotics & Prosthetics | O&P; Orthotics and Prosthetics Facility",
    ),
    "mental-health": _trades(
        "Clinical Psychology; Psychology Group | Psychological Services; Psychologist",
        "Marriage and Family Therapy; Family Therapy | Counseling; Licensed Marriage and Family Therapist",
        "Addiction Counseling; Recovery Center | Addiction Counseling; Licensed Alcohol and Drug Counselor",
        "Psychiatry; Psychiatry | Behavioral Health; Medical Doctor (MD)",
        "Counseling; Counseling | Therapy Center; Licensed Professional Counselor | Licensed Clinical Social Worker",
    ),
    "nonprofit": _trades(
        "Food Bank; Food Bank; 501(c)(3) Organization",
        "Youth Programs; Youth Alliance | Youth Services; 501(c)(3) Organization",
        "Housing Assistance; Housing Alliance | Community Housing; 501(c)(3) Organization",
        "Arts Education; Arts Foundation | Arts Council; 501(c)(3) Organization",
    ),
    "pet-services": _trades(
        "Pet Grooming; Pet Grooming | Grooming; Business License",
        "Dog Training; Dog Training | K9 Academy; Business License",
        "Pet Boarding; Pet Resort | Kennels; Kennel License",
        "Dog Walking; Dog Walking | Pet Sitters; Business License",
    ),
    "real-estate": _trades(
        "Residential Sales; Realty | Homes; Real Estate Broker",
        "Commercial Leasing; Commercial Real Estate | Properties; Real Estate Broker",
        "Property Management; Property Management | Properties; Real Estate Broker",
        "Appraisal; Appraisal | Valuation; Certified Residential Appraiser",
    ),
    "restaurants": _trades(
        "Italian Cuisine; Trattoria | Pizzeria | Italian Kitchen; Food Service Establishment | Liquor License",
        "Mexican Cuisine; Taqueria | Cantina; Food Service Establishment | Liquor License",
        "American Diner; Diner | Grill; Food Service Establishment",
        "Sushi; Sushi | Sushi Bar; Food Service Establishment | Liquor License",
        "Barbecue; BBQ | Smokehouse; Food Service Establishment",
        "Vegan; Vegan Kitchen | Plant Kitchen; Food Service Establishment",
        "Coffee and Bakery Cafe; Cafe | Coffee House; Food Service Establishment",
    ),
    "retail": _trades(
        "Hardware Store; Hardware; Seller's Permit",
        "Clothing Boutique; Boutique | Clothing; Seller's Permit",
        "Sporting Goods; Outfitters | Sporting Goods; Seller's Permit",
        "Furniture Store; Furniture | Home Furnishings; Seller's Permit",
    ),
    "saas": _trades(
        "CRM Software; CRM | Software; Business License",
        "Accounting Software; Ledger | Accounting Software; Business License",
        "Marketing Automation; Marketing Cloud | Analytics; Business License",
        "HR Software; HR Cloud | People Systems; Business License",
    ),
    "security-services": _trades(
        "Security Guard Services; Security | Protective Services; Private Patrol Operator",
        "Alarm Installation; Alarm | Alarm Systems; Alarm Company Operator",
        "Private Investigation; Investigations; Private Investigator",
        "Video Surveillance; Surveillance | Security Systems; Alarm Company Operator",
    ),
    "senior-care": _trades(
        "Assisted Living; Assisted Living | Senior Living; Residential Care Facility for the Elderly",
        "Memory Care; Memory Care; Residential Care Facility for the Elderly",
        "Home Health Aide; Home Care | Caregivers; Home Care Organization",
        "Skilled Nursing; Nursing and Rehabilitation | Care Center; Skilled Nursing Facility",
    ),
    "solar": _trades(
        "Residential Solar Installation; Solar | Solar Energy; @solar",
        "Commercial Solar; Solar Power | Renewables; @solar",
        "Battery Storage; Energy Storage | Solar & Storage; @solar",
        "Solar Maintenance; Solar Services | Solar Care; @solar",
    ),
    "telecommunications": _trades(
        "Fiber Installation; Fiber | Fiber Networks; @low_voltage",
        "Business Phone Systems; Communications | Telecom; @low_voltage",
        "Wireless Service; Wireless; Telecommunications Carrier Registration",
        "Cable Installation; Cable | Cabling; @low_voltage",
    ),
    "travel": _trades(
        "Corporate Travel; Travel | Travel Management; Seller of Travel Registration",
        "Cruise Booking; Cruises | Cruise Center; Seller of Travel Registration",
        "Adventure Tours; Expeditions | Adventure Tours; Seller of Travel Registration",
        "Destination Weddings; Getaways | Destination Weddings; Seller of Travel Registration",
    ),
    "veterinary": _trades(
        "Small Animal Medicine; Animal Hospital | Pet Clinic; Veterinary Premises Permit",
        "Equine Medicine; Equine Veterinary | Equine Clinic; Veterinary Premises Permit",
        "Veterinary Surgery; Veterinary Surgical Center | Veterinary Specialists; Veterinary Premises Permit",
        "Emergency Veterinary Care; Emergency Vet | Animal Emergency Center; Veterinary Premises Permit",
    ),
    "wholesale-distribution": _trades(
        "Food Distribution; Food Distributors | Foodservice; Wholesaler License",
        "Industrial Supplies; Industrial Supply | Supply Co; Wholesaler License",
        "Electrical Supplies; Electrical Supply | Electric Supply; Wholesaler License",
        "Medical Supplies; Medical Distributors | Medical Supply; Medical Device Wholesaler",
    ),
}  # fmt: skip

# Contractor licence classes: what each state's board calls the class (the CSLB's codes in California,
# DBPR's certified classes in Florida, TSBPE and TDLR licences in Texas), with the board's number
# format where it has one of its own. "*": every other state.
CONTRACTOR_CLASSES: dict[str, dict[str, tuple[str, str | None]]] = {
    "plumbing": {"CA": ("C-36 Plumbing Contractor", None), "FL": ("Certified Plumbing Contractor", "CFC#######"), "TX": ("Master Plumber", "M-#####"), "*": ("Plumbing Contractor", None)},
    "hvac": {"CA": ("C-20 HVAC Contractor", None), "FL": ("Certified Air Conditioning Contractor", "CAC#######"), "TX": ("Air Conditioning and Refrigeration Contractor", "TACLA#####C"), "*": ("HVAC Contractor", None)},
    "electrical": {"CA": ("C-10 Electrical Contractor", None), "FL": ("Certified Electrical Contractor", "EC########"), "TX": ("Electrical Contractor", "TECL#####"), "*": ("Electrical Contractor", None)},
    "roofing": {"CA": ("C-39 Roofing Contractor", None), "FL": ("Certified Roofing Contractor", "CCC#######"), "*": ("Roofing Contractor", None)},
    "landscaping": {"CA": ("C-27 Landscaping Contractor", None), "*": ("Landscape Contractor", None)},
    "pest": {"CA": ("Branch 2 Pest Control Operator", "PR ####"), "*": ("Pest Control Operator", None)},
    "pool": {"CA": ("C-53 Swimming Pool Contractor", None), "FL": ("Certified Pool/Spa Contractor", "CPC#######"), "*": ("Pool Contractor", None)},
    "solar": {"CA": ("C-46 Solar Contractor", None), "FL": ("Certified Solar Contractor", "CVC#####"), "*": ("Solar Contractor", None)},
    "low_voltage": {"CA": ("C-7 Low Voltage Systems Contractor", None), "*": ("Low Voltage Contractor", None)},
    "general": {"CA": ("B General Building Contractor", None), "FL": ("Certified General Contractor", "CGC#######"), "*": ("General Contractor", None)},
    "concrete": {"CA": ("C-8 Concrete Contractor", None), "*": ("Concrete Contractor", None)},
    "framing": {"CA": ("C-5 Framing and Rough Carpentry Contractor", None), "*": ("Framing Contractor", None)},
    "painting": {"CA": ("C-33 Painting and Decorating Contractor", None), "*": ("Painting Contractor", None)},
    "flooring": {"CA": ("C-15 Flooring and Floor Covering Contractor", None), "*": ("Flooring Contractor", None)},
    "abatement": {"CA": ("C-22 Asbestos Abatement Contractor", None), "*": ("Asbestos Abatement Contractor", None)},
}  # fmt: skip
# Licence numbers: "#" is a digit, "{ST}" the state. Contractor boards with a format of their own
# (California's CSLB: seven digits; Arizona's ROC), else the state's code and six digits.
CONTRACTOR_NUMBER_FORMATS: dict[str, str] = {"CA": "#######", "AZ": "ROC######"}
DEFAULT_NUMBER_FORMAT = "{ST}-######"

# Company suffixes by kind of business: professional corporations for the licensed professions; public
# bodies, charities and banks take their place's name and no suffix.
PROFESSIONAL_VERTICALS = frozenset(
    {"accounting", "dental", "engineering", "healthcare", "legal", "mental-health", "veterinary"}
)
PLACE_NAMED_VERTICALS = frozenset({"government", "nonprofit", "banking"})
PROFESSIONAL_SUFFIXES = ("PLLC", "PC", "PA", "", "")
COMPANY_SUFFIXES = ("LLC", "Inc", "Co", "& Sons", "Corp", "", "", "")

# Family names, place words and streets that businesses are named after and stand on.
# Common US family names: among the most frequent of the Census Bureau's surname list ("Frequently
# Occurring Surnames from the 2010 Census", published at census.gov with each name's count). Written from
# common knowledge of that list, not read from the file: neither its order nor its counts. Left out: names
# that are words people use for a trade (Baker, Mason, Hunter: a search for bakers would find a plumber
# named Baker) or begin with one (Poole, Wells), names of the demo's cities (Austin, Houston) and names
# written with an apostrophe.
SURNAMES = (
    "Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez",
    "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Martin", "Lee", "Perez",
    "Thompson", "White", "Harris", "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson", "Young", "Allen", "King",
    "Wright", "Scott", "Torres", "Nguyen", "Hill", "Flores", "Green", "Adams", "Nelson", "Rivera", "Campbell",
    "Mitchell", "Carter", "Roberts", "Gomez", "Phillips", "Evans", "Turner", "Diaz", "Parker", "Cruz", "Edwards",
    "Collins", "Reyes", "Stewart", "Morris", "Morales", "Murphy", "Cook", "Rogers", "Gutierrez", "Ortiz", "Morgan",
    "Cooper", "Peterson", "Bailey", "Reed", "Kelly", "Howard", "Ramos", "Kim", "Cox", "Ward", "Richardson", "Watson",
    "Brooks", "Chavez", "Wood", "James", "Bennett", "Gray", "Mendoza", "Ruiz", "Hughes", "Price", "Alvarez",
    "Castillo", "Sanders", "Patel", "Myers", "Long", "Ross", "Foster", "Jimenez", "Powell", "Jenkins", "Perry",
    "Russell", "Sullivan", "Bell", "Coleman", "Butler", "Barnes", "Gonzales", "Vasquez", "Simmons", "Romero",
    "Jordan", "Patterson", "Alexander", "Hamilton", "Graham", "Reynolds", "Griffin", "Wallace", "Moreno", "West",
    "Cole", "Hayes", "Bryant", "Herrera", "Gibson", "Ellis", "Tran", "Medina", "Aguilar", "Stevens", "Murray", "Ford",
    "Castro", "Marshall", "Owens", "Harrison", "Fernandez", "McDonald", "Woods", "Kennedy", "Vargas",
    "Henry", "Chen", "Freeman", "Webb", "Tucker", "Guzman", "Burns", "Crawford", "Olson", "Simpson", "Porter",
    "Gordon", "Mendez", "Silva", "Shaw", "Snyder", "Dixon", "Munoz", "Hunt", "Hicks", "Holmes", "Palmer", "Wagner",
    "Black", "Robertson", "Boyd", "Rose", "Stone", "Salazar", "Fox", "Warren", "Mills", "Meyer", "Rice", "Schmidt",
    "Garza", "Daniels", "Ferguson", "Nichols", "Stephens", "Soto", "Weaver", "Ryan", "Gardner", "Payne", "Grant",
    "Dunn", "Kelley", "Spencer", "Hawkins", "Arnold", "Pierce", "Vazquez", "Hansen", "Peters", "Santos", "Hart",
    "Bradley", "Knight", "Elliott", "Cunningham", "Duncan", "Armstrong", "Hudson", "Carroll", "Lane", "Riley",
    "Andrews", "Alvarado", "Ray", "Delgado", "Berry", "Perkins", "Hoffman", "Johnston", "Matthews", "Pena",
    "Richards", "Contreras", "Willis", "Sandoval", "Guerrero", "George", "Chapman", "Rios", "Estrada", "Ortega",
    "Watkins", "Greene", "Nunez", "Wheeler", "Valdez", "Harper", "Burke", "Larson", "Santiago", "Maldonado",
    "Morrison", "Franklin", "Carlson", "Dominguez", "Carr", "Lawson", "Jacobs", "Lynch", "Singh", "Vega", "Bishop",
    "Oliver", "Jensen", "Harvey", "Williamson", "Gilbert", "Dean", "Sims", "Espinoza", "Howell", "Wong", "Reid",
    "Hanson", "McCoy", "Garrett", "Burton", "Fuller", "Wang", "Weber", "Welch", "Rojas", "Lucas", "Marquez", "Fields",
    "Park", "Yang", "Little", "Padilla", "Walsh", "Bowman", "Schultz", "Luna", "Fowler", "Mejia", "Davidson",
    "Acosta", "May", "Holland", "Juarez", "Newman", "Pearson", "Curtis", "Cortez", "Douglas", "Schneider", "Joseph",
    "Barrett", "Navarro", "Figueroa", "Keller", "Avila", "Wade", "Molina", "Stanley", "Hopkins", "Campos", "Barnett",
    "Bates", "Chambers", "Caldwell", "Beck", "Lambert", "Miranda", "Byrd", "Craig", "Ayala", "Lowe", "Frazier",
    "Powers", "Neal", "Leonard", "Gregory", "Carrillo", "Sutton", "Fleming", "Rhodes", "Shelton", "Schwartz",
    "Norris", "Jennings", "Watts", "Duran", "Walters", "Cohen", "McDaniel", "Moran", "Steele", "Vaughn", "Becker",
    "Holt", "Deleon", "Barker", "Terry", "Hale", "Leon", "Benson", "Haynes", "Horton", "Miles", "Lyons", "Pham",
    "Graves", "Bush", "Thornton", "Wolfe", "Warner", "Cabrera", "McKinney", "Mann", "Zimmerman", "Dawson", "Lara",
    "Fletcher", "Page", "McCarthy", "Love", "Robles", "Cervantes", "Solis", "Erickson", "Reeves", "Chang", "Klein",
    "Salinas", "Fuentes", "Baldwin", "Daniel", "Simon", "Velasquez", "Hardy", "Higgins", "Aguirre", "Lin", "Cummings",
    "Chandler", "Sharp", "Bowen", "Ochoa", "Dennis", "Robbins", "Liu", "Ramsey", "Francis", "Griffith", "Paul",
    "Blair", "Cardenas", "Pacheco", "Cross", "Calderon", "Quinn", "Moss", "Swanson", "Chan", "Rivas", "Khan",
    "Rodgers", "Serrano", "Fitzgerald", "Rosales", "Stevenson", "Christensen", "Manning", "Gill", "Curry",
    "McLaughlin", "Harmon", "McGee", "Gross", "Doyle", "Garner", "Newton", "Burgess", "Reese", "Walton", "Blake",
    "Trujillo", "Adkins", "Brady", "Goodman", "Roman", "Webster", "Goodwin", "Fischer", "Huang", "Potter", "Delacruz",
    "Montoya", "Todd", "Hines", "Mullins", "Castaneda", "Malone", "Cannon", "Tate", "Mack", "Sherman", "Hubbard",
    "Hodges", "Zhang", "Guerra", "Wolf", "Valencia", "Saunders", "Franco", "Rowe", "Gallagher", "Hammond", "Hampton",
    "Townsend", "Ingram", "Wise", "Gallegos", "Clarke", "Barton", "Schroeder", "Maxwell", "Waters", "Logan",
    "Camacho", "Strickland", "Colon", "Parsons", "Frank", "Harrington", "Glover", "Osborne", "Buchanan", "Casey",
    "Floyd", "Patton", "Ibarra", "Ball", "Tyler", "Suarez", "Bowers", "Orozco", "Salas", "Cobb", "Gibbs", "Andrade",
    "Bauer", "Conner", "Moody", "Escobar", "McGuire", "Lloyd", "Mueller", "Hartman", "French", "Kramer", "McBride",
    "Pope", "Lindsey", "Velazquez", "Norton", "McCormick", "Sparks", "Flynn", "Yates", "Hogan", "Marsh", "Macias",
    "Villanueva", "Zamora", "Pratt", "Stokes", "Owen", "Ballard", "Lang", "Brock", "Villarreal", "Charles", "Drake",
    "Barrera", "Cain", "Patrick", "Pineda", "Burnett", "Mercado", "Santana", "Shepherd", "Bautista", "Ali", "Shaffer",
    "Lamb", "Trevino", "McKenzie", "Hess", "Olsen", "Cochran", "Morton", "Nash", "Wilkins", "Petersen", "Briggs",
    "Shah", "Roth", "Nicholson", "Holloway", "Lozano", "Rangel", "Flowers", "Hoover", "Short", "Arias", "Mora",
    "Valenzuela", "Bryan", "Meyers", "Weiss", "Underwood", "Bass", "Greer", "Summers", "Morrow", "Clayton",
    "Whitaker", "Decker", "Yoder", "Collier", "Zuniga", "Wilcox", "Melendez", "Roberson", "Larsen",
    "Conley", "Davenport", "Copeland", "Massey", "Lam", "Huff", "Rocha", "Cameron", "Jefferson", "Hood", "Monroe",
    "Anthony", "Pittman", "Huynh", "Randall", "Singleton", "Kirk", "Combs", "Mathis", "Christian",
    "Bradford", "Richard", "Galvan", "Wall", "Boone", "Kirby", "Wilkinson", "Bridges", "Bruce", "Atkinson", "Velez",
    "Meza", "Roy", "Vincent", "York", "Hodge", "Villa", "Abbott", "Allison", "Tapia", "Gates", "Chase", "Sosa",
    "Sweeney", "Farrell", "Wyatt", "Dalton", "Horn", "Barron", "Phelps", "Dickerson", "Heath", "Foley", "Atkins",
    "Mathews", "Bonilla", "Acevedo", "Benitez", "Zavala", "Hensley", "Glenn", "Cisneros", "Harrell", "Shields",
    "Rubio", "Choi", "Huffman", "Boyer", "Garrison", "Arroyo", "Bond", "Kane", "Hancock", "Callahan", "Dillon",
    "Cline", "Wiggins", "Grimes", "Arellano", "Melton", "Savage", "Beltran", "Pitts", "Parrish", "Ponce", "Rich",
    "Booth", "Koch", "Ware", "Brennan", "McDowell", "Marks", "Cantu", "Humphrey", "Baxter", "Sawyer", "Clay",
    "Tanner", "Hutchinson", "Kaur", "Berg", "Wiley", "Gilmore", "Russo", "Villegas", "Hobbs", "Keith", "Wilkerson",
    "Ahmed", "Beard", "McClain", "Montes", "Mata", "Rosario", "Vang", "Walter", "Henson", "Mosley", "McClure",
    "Beasley", "Stephenson", "Snow", "Huerta", "Preston", "Vance", "Barry", "Johns", "Eaton", "Blackwell", "Dyer",
    "Prince", "Macdonald", "Solomon", "Guevara", "Stafford", "English", "Hurst", "Woodard", "Cortes", "Shannon",
    "Kemp", "Nolan", "McCullough", "Merritt", "Murillo", "Moon", "Salgado", "Strong", "Kline", "Cordova", "Barajas",
    "Roach", "Rosas", "Winters", "Jacobson", "Lester", "Knox", "Bullock", "Kerr", "Leach", "Meadows", "Orr", "Davila",
    "Whitehead", "Pruitt", "Kent", "Conway", "McKee", "Barr", "David", "Dejesus", "Marin", "Berger", "McIntyre",
    "Blankenship", "Gaines", "Palacios", "Cuevas", "Bartlett", "Dorsey", "McCall", "Stein", "Browning", "Stout",
    "Lowery", "Sloan", "McLean", "Hendricks", "Calhoun", "Sexton", "Chung", "Gentry", "Hull", "Duarte", "Ellison",
    "Nielsen", "Gillespie", "Buck", "Middleton", "Sellers", "Leblanc", "Esparza", "Hardin", "Bradshaw", "McIntosh",
    "Howe", "Livingston", "Frost", "Glass", "Morse", "Knapp", "Herman", "Stark", "Bravo", "Noble", "Spears", "Weeks",
    "Corona", "Frederick", "Buckley", "McFarland", "Hebert", "Enriquez", "Hickman", "Quintero", "Randolph",
    "Schaefer", "Walls", "Trejo", "Reilly", "Pennington", "Michael", "Conrad", "Giles", "Benjamin", "Crosby",
    "Fitzpatrick", "Donovan", "Mays", "Mahoney", "Valentine", "Raymond", "Medrano", "Hahn", "McMillan", "Small",
    "Bentley", "Felix", "Peck", "Lucero", "Boyle", "Hanna", "Pace", "Rush", "Hurley", "Harding", "McConnell",
    "Bernal", "Nava", "Ayers", "Everett", "Ventura", "Avery", "Pugh", "Mayer", "Bender", "Shepard", "McMahon",
    "Landry", "Case", "Sampson", "Moses", "Magana", "Blackburn", "Dunlap", "Gould", "Duffy", "Vaughan", "Herring",
    "McKay", "Espinosa", "Rivers", "Farley", "Bernard", "Ashley", "Friedman", "Potts", "Truong", "Costa", "Correa",
    "Blevins", "Nixon", "Clements", "Fry", "Delarosa", "Best", "Benton", "Lugo", "Portillo", "Dougherty", "Crane",
    "Haley", "Phan", "Villalobos", "Blanchard", "Horne", "Finley", "Quintana", "Lynn", "Esquivel", "Bean", "Dodson",
    "Mullen", "Xiong", "Hayden", "Cano", "Levy", "Huber", "Moyer", "Lim", "Frye", "Sheppard", "McCarty", "Avalos",
    "Booker", "Waller", "Parra", "Woodward", "Jaramillo", "Krueger", "Rasmussen", "Peralta", "Donaldson",
    "Stuart", "Faulkner", "Maynard", "Galindo", "Coffey", "Estes", "Sanford", "Burch", "Maddox", "Andersen", "Spence",
    "McPherson", "Church", "Schmitt", "Stanton", "Leal", "Cherry", "Compton", "Dudley", "Sierra", "Pollard", "Alfaro",
    "Hester", "Proctor", "Hinton", "Novak", "Good", "Madden", "McCann", "Terrell", "Jarvis", "Dickson", "Reyna",
    "Cantrell", "Mayo", "Branch", "Hendrix", "Rollins", "Rowland", "Whitney", "Duke", "Odom", "Daugherty", "Travis",
    "Tang",
)  # fmt: skip
PLACE_WORDS = (
    "Summit", "Valley", "Harbor", "Pioneer", "Liberty", "Evergreen", "Cedar", "Oak", "Maple", "Riverside",
    "Lakeside", "Granite", "Golden", "Eagle", "Northstar", "Heritage", "Meridian", "Keystone", "Sterling",
    "Cornerstone", "Bluebird", "Redwood", "Silver", "Prairie", "Coastal",
)  # fmt: skip
STREET_NAMES = (
    "Main", "Oak", "Maple", "Pine", "Cedar", "Elm", "Washington", "Lake", "Hill", "Park", "Church", "Market",
    "Broad", "Center", "Highland", "Sunset", "Ridge", "Spring", "Jefferson", "Lincoln", "Madison", "Franklin",
)  # fmt: skip
STREET_TYPES = ("St", "Ave", "Blvd", "Rd", "Dr", "Ln", "Way", "Pkwy")
