// The zones covering each state or province of the countries with several zones, written from the tz database's
// zone1970.tab (one row per zone, its comment naming the states it covers) and its region notes: a state in
// several zones lists them all, and location-zone.ts counts it as one zone only if they agree.
// Kept small and checked: test/map/location-zone.test.ts asserts every zone here is one of its country's zones
// in countries-and-timezones (so a tz release that renames or splits a zone fails the test, not a record).

/** Per country (alpha-2), per subdivision code (ISO 3166-2, without the country prefix): its zones. */
export const STATE_ZONES: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  US: {
    // America/New_York "Eastern (most areas)".
    ...each('America/New_York', 'CT DE DC GA ME MD MA NH NJ NY NC OH PA RI SC VT VA WV'),
    // America/Chicago "Central (most areas)".
    ...each('America/Chicago', 'AL AR IL IA LA MN MS MO OK WI'),
    // America/Denver "Mountain (most areas)".
    ...each('America/Denver', 'CO MT NM UT WY'),
    ...each('America/Los_Angeles', 'CA NV WA'),
    HI: ['Pacific/Honolulu'],
    // States in two zones: the comments of Detroit, Menominee, the Indiana, Kentucky and North Dakota zones,
    // Boise ("ID (south), OR (east)"), Phoenix ("AZ (most areas)": the Navajo Nation keeps Denver's DST), and
    // the region notes for Texas (El Paso), Florida (panhandle), Tennessee, Kansas, Nebraska, South Dakota.
    MI: ['America/Detroit', 'America/Menominee'],
    IN: [
      'America/Indiana/Indianapolis',
      'America/Indiana/Vincennes',
      'America/Indiana/Winamac',
      'America/Indiana/Marengo',
      'America/Indiana/Petersburg',
      'America/Indiana/Vevay',
      'America/Indiana/Tell_City',
      'America/Indiana/Knox',
      'America/Chicago',
    ],
    KY: ['America/Kentucky/Louisville', 'America/Kentucky/Monticello', 'America/Chicago'],
    ND: [
      'America/Chicago',
      'America/North_Dakota/Center',
      'America/North_Dakota/New_Salem',
      'America/North_Dakota/Beulah',
      'America/Denver',
    ],
    ID: ['America/Boise', 'America/Los_Angeles'],
    OR: ['America/Los_Angeles', 'America/Boise'],
    AZ: ['America/Phoenix', 'America/Denver'],
    TX: ['America/Chicago', 'America/Denver'],
    FL: ['America/New_York', 'America/Chicago'],
    TN: ['America/New_York', 'America/Chicago'],
    KS: ['America/Chicago', 'America/Denver'],
    NE: ['America/Chicago', 'America/Denver'],
    SD: ['America/Chicago', 'America/Denver'],
    AK: [
      'America/Anchorage',
      'America/Juneau',
      'America/Sitka',
      'America/Metlakatla',
      'America/Yakutat',
      'America/Nome',
      'America/Adak',
    ],
  },
  CA: {
    NL: ['America/St_Johns', 'America/Goose_Bay'],
    NS: ['America/Halifax', 'America/Glace_Bay'],
    PE: ['America/Halifax'],
    NB: ['America/Moncton'],
    QC: ['America/Toronto', 'America/Puerto_Rico'],
    ON: ['America/Toronto', 'America/Winnipeg', 'America/Panama'],
    MB: ['America/Winnipeg'],
    SK: ['America/Regina', 'America/Swift_Current', 'America/Edmonton'],
    AB: ['America/Edmonton'],
    BC: [
      'America/Vancouver',
      'America/Edmonton',
      'America/Dawson_Creek',
      'America/Fort_Nelson',
      'America/Phoenix',
    ],
    YT: ['America/Whitehorse', 'America/Dawson'],
    NT: ['America/Edmonton', 'America/Inuvik'],
    NU: [
      'America/Iqaluit',
      'America/Rankin_Inlet',
      'America/Resolute',
      'America/Cambridge_Bay',
      'America/Panama',
    ],
  },
  AU: {
    NSW: ['Australia/Sydney', 'Australia/Broken_Hill', 'Australia/Lord_Howe'],
    // The ACT keeps Sydney's time (tz's Australia/Canberra is a link to it).
    ACT: ['Australia/Sydney'],
    VIC: ['Australia/Melbourne'],
    QLD: ['Australia/Brisbane', 'Australia/Lindeman'],
    SA: ['Australia/Adelaide'],
    WA: ['Australia/Perth', 'Australia/Eucla'],
    TAS: ['Australia/Hobart'],
    NT: ['Australia/Darwin'],
  },
  BR: {
    ...each('America/Sao_Paulo', 'GO DF MG ES RJ SP PR SC RS'),
    ...each('America/Fortaleza', 'MA PI CE RN PB'),
    ...each('America/Maceio', 'AL SE'),
    PE: ['America/Recife', 'America/Noronha'],
    AP: ['America/Belem'],
    PA: ['America/Belem', 'America/Santarem'],
    TO: ['America/Araguaina'],
    BA: ['America/Bahia'],
    MS: ['America/Campo_Grande'],
    MT: ['America/Cuiaba'],
    RO: ['America/Porto_Velho'],
    RR: ['America/Boa_Vista'],
    AM: ['America/Manaus', 'America/Eirunepe'],
    AC: ['America/Rio_Branco'],
  },
  MX: {
    // America/Mexico_City "Central Mexico".
    ...each(
      'America/Mexico_City',
      'AGU CHP COL CMX GUA GRO HID JAL MEX MIC MOR OAX PUE QUE SLP TAB TLA VER ZAC',
    ),
    DUR: ['America/Monterrey'],
    COA: ['America/Monterrey', 'America/Matamoros'],
    NLE: ['America/Monterrey', 'America/Matamoros'],
    TAM: ['America/Monterrey', 'America/Matamoros'],
    ROO: ['America/Cancun'],
    CAM: ['America/Merida'],
    YUC: ['America/Merida'],
    CHH: ['America/Chihuahua', 'America/Ciudad_Juarez', 'America/Ojinaga'],
    BCS: ['America/Mazatlan'],
    SIN: ['America/Mazatlan'],
    NAY: ['America/Mazatlan', 'America/Bahia_Banderas'],
    SON: ['America/Hermosillo'],
    BCN: ['America/Tijuana'],
  },
  RU: {
    // Only the subjects zone1970.tab's comments name (and the cities of "Moscow area"); any other is refused,
    // naming `states` to settle it, never guessed.
    KGD: ['Europe/Kaliningrad'],
    ...each('Europe/Moscow', 'MOW MOS SPE LEN'),
    KIR: ['Europe/Kirov'],
    VGG: ['Europe/Volgograd'],
    AST: ['Europe/Astrakhan'],
    SAR: ['Europe/Saratov'],
    ULY: ['Europe/Ulyanovsk'],
    ...each('Europe/Samara', 'SAM UD'),
    OMS: ['Asia/Omsk'],
    NVS: ['Asia/Novosibirsk'],
    ...each('Asia/Barnaul', 'ALT AL'),
    TOM: ['Asia/Tomsk'],
    KEM: ['Asia/Novokuznetsk'],
    KYA: ['Asia/Krasnoyarsk'],
    ...each('Asia/Irkutsk', 'IRK BU'),
    ZAB: ['Asia/Chita'],
    SA: ['Asia/Yakutsk', 'Asia/Khandyga', 'Asia/Ust-Nera', 'Asia/Srednekolymsk'],
    MAG: ['Asia/Magadan'],
    SAK: ['Asia/Sakhalin', 'Asia/Srednekolymsk'],
    KAM: ['Asia/Kamchatka'],
    CHU: ['Asia/Anadyr'],
  },
};

function each(zone: string, codes: string): Record<string, readonly string[]> {
  return Object.fromEntries(codes.split(' ').map((c) => [c, [zone]]));
}
