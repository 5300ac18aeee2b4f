"""What a standing constraint rules out: categories of things, in English, German, Spanish and French.

A constraint names a thing ("sugar", "Fleisch", "los perros", "l'avion") or a diet identity ("vegetarian"); a later
event names a member of it ("chocolate cake", "Schnitzel", "labrador", "vol"). MiniLM links some of these by
embedding, but only in English and only loosely ("alcohol" is closer to "sparkling water" than to "prosecco"), so
the engine first expands a constraint through this table of general knowledge: each category has a short English
description (embedded, so a constraint that names no listed word can still land on the nearest category), the
words that *name* it in a constraint, the words of its members in four languages, and the narrower categories it
contains (meat contains pork, so "I don't eat meat" rules out bacon; "I don't eat pork" does not rule out chicken).

These are lexicons of lemmas, not sentences: nothing here comes from a memory or a benchmark case. Words are
written without accents and lower case (matching folds the text the same way); a term of several words matches
consecutive words. Inflection (plurals, German case endings) and German compounds are handled by the matcher in
:mod:`neusym.governance.contradictions`.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

from neusym.language import regex as rx

__all__ = ["CATEGORIES", "IDENTITIES", "KINDS", "VERB_CATEGORIES", "Category", "fold", "tokens"]


@functools.lru_cache(maxsize=16384)
def fold(text: str) -> str:
    """Lower case without accents, apostrophes as spaces: the form every lexicon word above is written in. Cached:
    the write path folds each new memory once per standing constraint it is checked against."""
    s = unicodedata.normalize("NFKD", text.casefold().replace("ß", "ss").replace("œ", "oe").replace("æ", "ae"))
    s = "".join(ch for ch in s if not unicodedata.combining(ch))
    return rx.sub(r"[\u2019'`]", " ", s)


_TOKEN = rx.compile(r"[a-z0-9]+(?:[.-][a-z0-9]+)*")


def tokens(text: str) -> list[str]:
    """The folded words of ``text`` ("Haselnuss-Torte" stays one word, "a.m." too); a new list each call."""
    return list(_tokens(text))


@functools.lru_cache(maxsize=16384)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(fold(text)))


@dataclass(frozen=True)
class Category:
    """A kind of thing a constraint can rule out."""

    name: str
    description: str  # embedded: the nearest category of a constraint target the lexicon does not know
    names: tuple[str, ...]  # words that name the whole category in a constraint ("meat", "Fleisch", "carne")
    members: tuple[str, ...]  # things that belong to it (an event naming one of them touches the category)
    parts: tuple[str, ...] = ()  # narrower categories it contains


def _terms(s: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(" ".join(tokens(t)) for t in s.split("|") if tokens(t)))


def _cat(name: str, description: str, names: str, members: str, parts: str = "") -> Category:
    return Category(name, description, _terms(names), _terms(members), tuple(parts.split()))


_TABLE = (
    # ---------------------------------------------------------------- food
    _cat("meat", "meat dishes: beef, pork, chicken, lamb, sausages, burgers, steak",
         "meat|meats|red meat|fleisch|carne|carnes|viande|viandes",
         "steak|beef|burger|hamburger|cheeseburger|lamb|mutton|veal|venison|rabbit|goat|meatball|meatballs|ribs|"
         "brisket|kebab|doner|shawarma|gyro|gyros|mince|jerky|pate|schnitzel|cutlet|chops|tartare|carpaccio|liver|"
         "foie gras|bolognese|meat pie|pastrami|corned beef|roast beef|wings|nuggets|hot dog|rindfleisch|rind|"
         "kalb|lamm|hackfleisch|frikadelle|bratwurst|wurst|currywurst|gulasch|braten|filet|kotelett|ternera|"
         "vaca|cordero|chuleton|chuleta|filete|solomillo|albondigas|hamburguesa|asado|carne asada|boeuf|veau|"
         "agneau|entrecote|bavette|tournedos|cote de boeuf|bourguignon|hachis|merguez|jambonneau|magret|"
         "steak frites|steak tartare|lapin",
         "pork poultry"),
    _cat("pork", "pork and pork products: bacon, ham, sausage, salami", "pork|schwein|schweinefleisch|cerdo|porc",
         "pork|bacon|ham|gammon|sausage|sausages|salami|chorizo|pepperoni|prosciutto|pancetta|pulled pork|"
         "spare ribs|pork belly|lard|hot dog|char siu|carnitas|speck|schinken|wurst|bratwurst|leberkase|"
         "schweinebraten|eisbein|jamon|jamon serrano|lomo|panceta|morcilla|salchicha|salchichon|cochinillo|"
         "lardons|jambon|saucisse|saucisson|rillettes|andouillette|boudin|lard"),
    _cat("poultry", "poultry: chicken, turkey, duck", "poultry|gefluegel|geflugel|aves|volaille",
         "chicken|turkey|duck|goose|quail|hahnchen|huhn|hendl|pute|truthahn|ente|gans|pollo|pavo|pato|poulet|"
         "dinde|canard|oie|coq au vin|nuggets|wings"),
    _cat("fish", "fish and seafood dishes: salmon, tuna, cod, sushi, prawns",
         "fish|seafood|fisch|meeresfruchte|pescado|pescados|poisson|poissons|fruits de mer",
         "salmon|tuna|cod|haddock|trout|mackerel|sardines|sardine|anchovies|anchovy|herring|sea bass|halibut|sole|"
         "tilapia|swordfish|sushi|sashimi|nigiri|maki|fish and chips|fish fingers|ceviche|poke|lachs|thunfisch|"
         "kabeljau|forelle|hering|matjes|makrele|fischstabchen|salmon ahumado|atun|bacalao|merluza|trucha|"
         "sardinas|boquerones|anchoas|dorada|lubina|saumon|thon|cabillaud|truite|maquereau|hareng|bar|"
         "dorade|morue|brandade|bouillabaisse",
         "shellfish"),
    _cat("shellfish", "shellfish: prawns, shrimp, crab, lobster, mussels, oysters",
         "shellfish|crustaceans|schalentiere|meeresfruchte|marisco|mariscos|fruits de mer|crustaces",
         "prawn|prawns|shrimp|shrimps|crab|lobster|mussels|oysters|clams|scallops|squid|calamari|octopus|crayfish|"
         "langoustine|garnelen|krabben|hummer|muscheln|austern|tintenfisch|gambas|langostinos|camarones|cangrejo|"
         "langosta|mejillones|ostras|almejas|calamares|pulpo|vieiras|crevettes|crabe|homard|moules|huitres|"
         "palourdes|coquilles saint-jacques|calmars|poulpe|langoustines|paella de marisco"),
    _cat("dairy", "dairy products: milk, cheese, butter, cream, yoghurt, ice cream",
         "dairy|lactose|milk|milk products|milch|milchprodukte|laktose|lacteos|leche|lactosa|lait|"
         "produits laitiers|lactose",
         "milk|cheese|butter|cream|yoghurt|yogurt|ice cream|milkshake|custard|cheesecake|mozzarella|parmesan|brie|"
         "cheddar|feta|camembert|fondue|raclette|mac and cheese|latte|cappuccino|gelato|creme brulee|milch|kase|"
         "sahne|quark|joghurt|eis|leche|queso|mantequilla|nata|helado|yogur|natillas|lait|fromage|beurre|creme|"
         "yaourt|glace|cafe au lait|croque monsieur"),
    _cat("eggs", "eggs and egg dishes: omelette, scrambled eggs, quiche", "eggs|egg|eier|ei|huevos|huevo|oeufs|oeuf",
         "egg|eggs|omelette|omelet|scrambled eggs|fried egg|boiled egg|quiche|frittata|mayonnaise|meringue|"
         "carbonara|eggs benedict|shakshuka|eier|ei|ruhrei|spiegelei|huevo|huevos|tortilla de patatas|"
         "tortilla espanola|huevos rotos|oeuf|oeufs|omelette aux|oeufs brouilles"),
    _cat("gluten", "gluten and wheat: bread, pasta, pizza, beer, cake",
         "gluten|wheat|weizen|trigo|ble|gluten",
         "bread|toast|pasta|spaghetti|noodles|pizza|beer|cake|biscuits|cookies|croissant|bagel|sandwich|wrap|"
         "couscous|baguette|pastry|muffin|crackers|flour|cereal|barley|rye|seitan|dumplings|ramen|udon|pancakes|"
         "waffles|lasagne|lasagna|brot|brotchen|nudeln|kuchen|bier|breze|brezel|pan|pasta|galletas|bocadillo|"
         "cerveza|empanada|pain|pates|gateau|biere|tartine"),
    _cat("sweets", "sugar and sweet food: cake, chocolate, candy, desserts, soda",
         "sugar|sugary|sweets|sugary food|zucker|susses|sussigkeiten|azucar|dulces|sucre|sucreries",
         "sugar|sweets|candy|chocolate|cake|dessert|desserts|doughnut|doughnuts|donut|donuts|cookies|brownie|"
         "cupcake|muffin|pie|tart|soda|cola|coke|pepsi|fizzy drink|lemonade|milkshake|syrup|jam|gummy bears|"
         "lollipop|caramel|fudge|tiramisu|cheesecake|waffles|pancakes|marshmallows|macarons|ice cream|gelato|"
         "pudding|biscuits|croissant|pastry|pastries|nutella|schokolade|kuchen|torte|susses|bonbons|gummibarchen|"
         "eis|chocolate|tarta|pastel|caramelos|dulce|golosinas|churros|bolleria|helado|flan|refresco|gateau|"
         "gateaux|bonbons|patisserie|patisseries|glace|crepe|crepes|soda|energy drink|red bull",
         "sweet_drinks"),
    _cat("sweet_drinks", "soft drinks and soda", "soda|soft drinks|fizzy drinks|limonade|refrescos|sodas",
         "soda|cola|coke|pepsi|sprite|fanta|lemonade|fizzy drink|limo|refresco|gaseosa"),
    _cat("junk_food", "fast food and processed food: burgers, fries, crisps, instant noodles, takeaway",
         "fast food|junk food|processed food|processed foods|ultra-processed|takeaway|fastfood|comida rapida|"
         "comida basura|malbouffe|restauration rapide",
         "burger|fries|chips|crisps|instant noodles|pot noodle|hot dog|nuggets|pizza|mcdonald's|mcdonalds|kfc|"
         "burger king|subway|takeaway|take-away|microwave meal|ready meal|sausage roll|fried chicken|frozen pizza|"
         "doughnut|soda|pommes|currywurst|dorito|doritos|pringles|hamburguesa|patatas fritas|frites|kebab"),
    _cat("nuts", "nuts: peanuts, almonds, walnuts, cashews, hazelnuts",
         "nuts|nut|peanuts|tree nuts|nusse|nuss|erdnusse|frutos secos|nueces|cacahuetes|mani|noix|fruits a coque|"
         "arachides|cacahuetes",
         "peanut|peanuts|peanut butter|almond|almonds|walnut|walnuts|cashew|cashews|hazelnut|hazelnuts|pecan|"
         "pecans|pistachio|pistachios|macadamia|brazil nuts|nutella|praline|marzipan|satay|pesto|trail mix|"
         "nut butter|baklava|erdnuss|erdnusse|mandeln|walnusse|haselnuss|haselnusse|cashewkerne|pistazien|"
         "nusse|nuss|cacahuete|cacahuetes|mani|almendras|nueces|avellanas|pistachos|turron|cacahuete|arachide|"
         "amandes|noix|noisettes|pistaches|beurre de cacahuete"),
    _cat("carbs", "carbohydrates: bread, pasta, rice, potatoes", "carbs|carbohydrates|kohlenhydrate|carbohidratos|"
         "glucides", "bread|pasta|rice|potatoes|fries|pizza|noodles|cereal|brot|nudeln|reis|kartoffeln|pan|arroz|"
         "patatas|pain|riz|pommes de terre"),
    _cat("food", "food and meals", "food|meals|snacks|essen|comida|nourriture|manger",
         "dinner|lunch|breakfast|snack|meal|takeaway|pizza|burger|sandwich|abendessen|mittagessen|cena|"
         "almuerzo|diner|dejeuner|repas",
         "meat fish dairy eggs gluten sweets junk_food nuts carbs"),
    # ---------------------------------------------------------------- drink and substances
    _cat("alcohol", "alcoholic drinks: beer, wine, spirits, cocktails",
         "alcohol|booze|alcoholic drinks|drinking|alkohol|alcohol|bebidas alcoholicas|alcool",
         "beer|beers|lager|ale|ipa|stout|cider|wine|red wine|white wine|rose|prosecco|champagne|cava|sangria|"
         "spirits|whisky|whiskey|vodka|gin|rum|tequila|brandy|cognac|sake|soju|cocktail|cocktails|margarita|"
         "mojito|martini|negroni|spritz|aperol|shots|pint|pints|liquor|schnapps|mead|port|sherry|bourbon|drunk|"
         "hangover|hungover|tipsy|wasted|bubbly|bier|wein|rotwein|weisswein|sekt|schnaps|mass|glühwein|gluhwein|cerveza|cervezas|"
         "cana|canas|vino|vino tinto|tinto|copa|copas|chupito|chupitos|kalimotxo|calimocho|biere|bieres|vin|"
         "vin rouge|vin blanc|pastis|apero|coupe de champagne|digestif|borracho|betrunken|ivre|cuite",
         "beer wine spirits"),
    _cat("beer", "beer: lager, ale, pints", "beer|beers|bier|cerveza|cervezas|biere|bieres",
         "beer|lager|ale|ipa|stout|porter|pils|pilsner|pint|pints|bitter|shandy|craft beer|bier|weissbier|weizen|"
         "helles|radler|mass|cerveza|cana|canas|tercio|jarra|clara|biere|demi|pression|blonde|panache"),
    _cat("wine", "wine: red wine, white wine, champagne, prosecco", "wine|wines|wein|vino|vinos|vin|vins",
         "wine|red wine|white wine|rose|prosecco|champagne|cava|sangria|port|sherry|mulled wine|wein|rotwein|"
         "weisswein|sekt|gluhwein|schorle|vino|tinto|vino tinto|blanco|rosado|vin|vin rouge|vin blanc|bordeaux|"
         "bourgogne|rioja|coupe de champagne|verre de vin|copa de vino"),
    _cat("spirits", "spirits and cocktails: whisky, vodka, gin, rum, shots",
         "spirits|liquor|hard liquor|schnaps|spirituosen|licores|alcools forts",
         "whisky|whiskey|vodka|gin|rum|tequila|brandy|cognac|bourbon|shots|shot|cocktail|cocktails|margarita|"
         "mojito|martini|negroni|spritz|aperol|schnapps|schnaps|korn|obstler|chupito|chupitos|ron|orujo|"
         "pastis|digestif|calvados|liqueur|limoncello|ouzo|raki|gin tonic"),
    _cat("coffee", "coffee and caffeine: espresso, latte, cappuccino, energy drinks",
         "coffee|caffeine|kaffee|koffein|cafe|cafeina|cafeine",
         "coffee|espresso|espressos|latte|cappuccino|americano|flat white|macchiato|mocha|cold brew|caffeine|"
         "energy drink|red bull|monster|double shot|frappuccino|starbucks|kaffee|espresso|milchkaffee|cafe|cafe con leche|cortado|"
         "cafe solo|cafecito|cafe au lait|cafe creme|noisette|ristretto"),
    _cat("energy_drinks", "energy drinks: Red Bull, Monster",
         "energy drinks|energy drink|energydrinks|bebidas energeticas|boissons energisantes",
         "red bull|monster|energy drink|rockstar|relentless|burn"),
    _cat("tobacco", "smoking tobacco: cigarettes, cigars, vaping",
         "smoking|tobacco|cigarettes|nicotine|rauchen|tabak|zigaretten|fumar|tabaco|cigarrillos|fumer|tabac|"
         "cigarettes",
         "cigarette|cigarettes|cigar|cigars|smoke|smoked|smoking|tobacco|vape|vaped|vaping|e-cigarette|pipe|"
         "shisha|hookah|nicotine|marlboro|fag|fags|rolling tobacco|zigarette|zigaretten|zigarre|geraucht|"
         "rauchen|kippe|shisha|cigarrillo|cigarrillos|puro|pitillo|fume|fumado|fumar|clope|clopes|cigare|"
         "fume une|fume des"),
    _cat("drugs", "recreational drugs: cannabis, weed, joint",
         "drugs|weed|cannabis|marijuana|drogen|drogas|drogue|drogues",
         "weed|cannabis|marijuana|joint|spliff|blunt|edible|edibles|hash|pot|cocaine|coke|mdma|ecstasy|lsd|"
         "ketamine|kiffen|gras|porro|porros|hierba|canuto|petard|beuh|shit"),
    _cat("gambling", "gambling: betting, casino, poker, lottery",
         "gamble|gambling|betting|glucksspiel|wetten|apuestas|jugar|juego|jeux d'argent|parier",
         "bet|bets|betting|casino|poker|blackjack|roulette|slot machine|slot machines|slots|lottery|scratch card|"
         "scratch cards|bookmaker|bookie|wager|odds|bingo|accumulator|quid on|fiver on|tenner on|put money on|"
         "wette|gewettet|spielothek|lotto|apuesta|aposte|apostado|loteria|tragaperras|pari|parie|loto|tierce"),
    # ---------------------------------------------------------------- fears and things to stay away from
    _cat("heights", "heights: skydiving, climbing, cliffs, tall buildings, roller coasters",
         "heights|height|hohen|hohe|alturas|altura|vertige|vertigo|hauteur|hauteurs|acrophobia|acrophobic",
         "skydiving|skydive|parachute|bungee|bungee jumping|climbing|rock climbing|abseiling|cliff|cliffs|"
         "rooftop|skyscraper|observation deck|roller coaster|rollercoaster|ferris wheel|zip line|zipline|"
         "paragliding|hang gliding|hot air balloon|glass floor|summit|via ferrata|tower|top floor|fallschirm|turm|"
         "fallschirmsprung|klettern|geklettert|bungeesprung|achterbahn|gipfel|paracaidas|paracaidismo|"
         "escalada|escalar|puenting|montana rusa|torre|lo alto|rascacielos|parachute|la tour|gratte-ciel|saut en parachute|escalade|saut a l'elastique|"
         "parapente|montagnes russes|sommet"),
    _cat("flying", "flying: flights, planes, airports",
         "flying|flights|planes|aeroplanes|airplanes|fly|flugzeug|fliegen|flug|volar|avion|aviones|vuelo|"
         "vuelos|l'avion|prendre l'avion|voler",
         "flight|flights|flew|flown|plane|aeroplane|airplane|airport|airline|jet|boarding|take off|landing|"
         "landed|layover|ryanair|easyjet|lufthansa|helicopter|flug|flugzeug|geflogen|flughafen|gelandet|"
         "vuelo|volé|vole|volamos|avion|aeropuerto|aterrice|aterrizar|aterrizamos|vol|avion|aeroport|atterri|"
         "atterrir|decollage|escale"),
    _cat("water", "deep water and swimming: the sea, swimming pools, diving, boats",
         "water|deep water|swimming|the sea|wasser|schwimmen|agua|nadar|eau|nager",
         "swim|swam|swimming|pool|sea|ocean|lake|diving|dive|scuba|snorkel|snorkelling|snorkeling|surfing|surf|"
         "kayak|kayaking|sailing|boat|paddleboard|paddleboarding|waves|reef|schwimmbad|geschwommen|tauchen|"
         "getaucht|meer|see|nadé|nade|piscina|buceo|bucear|mar|plongee|plonge|nage|piscine|mer|snorkeling"),
    _cat("dogs", "dogs and puppies", "dogs|dog|hunde|hund|perros|perro|chiens|chien",
         "dog|dogs|puppy|puppies|labrador|poodle|terrier|retriever|spaniel|bulldog|german shepherd|collie|husky|"
         "dachshund|beagle|pug|chihuahua|rottweiler|doberman|greyhound|hund|hunde|welpe|dackel|schaferhund|"
         "perro|perros|cachorro|chien|chiens|chiot"),
    _cat("cats", "cats and kittens", "cats|cat|katzen|katze|gatos|gato|chats|chat",
         "cat|cats|kitten|kittens|kitty|tabby|feline|siamese|katze|katzen|katzchen|kater|gato|gatos|gatito|"
         "chat|chats|chaton|minou"),
    _cat("furry_animals", "animals with fur: cats, dogs, rabbits, horses",
         "animals with fur|furry animals|pets|animals|tiere|haustiere|animales|mascotas|animaux",
         "hamster|guinea pig|rabbit|bunny|ferret|horse|pony", "cats dogs horses"),
    _cat("spiders", "spiders and insects", "spiders|spider|insects|bugs|spinnen|spinne|aranas|arana|araignees|"
         "araignee|insectos|insectes|arachnophobia",
         "spider|spiders|tarantula|insect|insects|bug|bugs|cockroach|wasp|wasps|bees|bee|spinne|vogelspinne|"
         "arana|tarantula|araignee|mygale|cafard"),
    _cat("snakes", "snakes and reptiles", "snakes|snake|reptiles|schlangen|schlange|serpientes|serpiente|"
         "serpents|serpent|culebras",
         "snake|snakes|python|cobra|viper|boa|rattlesnake|reptile|lizard|schlange|serpiente|culebra|serpent|"
         "couleuvre|vipere"),
    _cat("horses", "horses and horse riding", "horses|horse|pferde|pferd|caballos|caballo|chevaux|cheval",
         "horse|horses|pony|riding|horse riding|horseback|stallion|mare|pferd|pferde|reiten|geritten|caballo|"
         "montar a caballo|cheval|chevaux|equitation|poney"),
    _cat("birds", "birds", "birds|bird|vogel|pajaros|aves|oiseaux", "bird|birds|pigeon|parrot|vogel|pajaro|oiseau"),
    _cat("enclosed", "small enclosed spaces: lifts, elevators, tunnels, caves",
         "enclosed spaces|small spaces|confined spaces|lifts|elevators|claustrophobia|claustrophobic|aufzug|platz|"
         "aufzuge|ascensor|ascensores|ascenseur|ascenseurs|espacios cerrados",
         "elevator|elevators|lift|lifts|tunnel|cave|caves|mri|escape room|cupboard|aufzug|fahrstuhl|tunnel|hohle|"
         "ascensor|cueva|ascenseur|grotte"),
    _cat("needles", "needles and blood: injections, vaccines, blood tests",
         "needles|needle|injections|blood|spritzen|blut|agujas|inyecciones|sangre|aiguilles|piqures|sang",
         "injection|jab|vaccine|vaccination|blood test|tattoo|piercing|drip|spritze|impfung|blutabnahme|vacuna|"
         "analisis de sangre|tatuaje|vaccin|prise de sang|tatouage"),
    _cat("crowds", "crowds: concerts, festivals, stadiums", "crowds|crowded places|menschenmengen|multitudes|foule",
         "concert|festival|stadium|rush hour|packed|crowd|konzert|festival|estadio|concierto|concert|stade"),
    _cat("public_speaking", "public speaking: speeches, presentations", "public speaking|speaking in public|"
         "hablar en publico|parler en public|reden",
         "speech|presentation|talk on stage|keynote|toast|rede|vortrag|discurso|presentacion|discours|expose"),
    # ---------------------------------------------------------------- habits and activities
    _cat("driving", "driving a car", "driving|drive|cars|autofahren|auto fahren|conducir|manejar|conduire",
         "drive|drove|driven|driving|car|motorway|highway|road trip|behind the wheel|gefahren|auto|autobahn|"
         "conduje|conduci|coche|carro|autopista|conduit|voiture|autoroute"),
    _cat("running", "running and jogging", "running|run|jogging|laufen|joggen|correr|courir",
         "ran|run|running|jog|jogged|jogging|5k|10k|half marathon|marathon|sprint|sprinted|treadmill|parkrun|"
         "gelaufen|gejoggt|corri|carrera|couru|course a pied|footing"),
    _cat("social_media", "social media: Instagram, Facebook, TikTok, Twitter",
         "social media|social networks|soziale medien|redes sociales|reseaux sociaux",
         "instagram|facebook|tiktok|twitter|snapchat|reddit|linkedin|posted|post|story|stories|feed|scrolling|"
         "likes|followers|gepostet|publique|publie|publicado|subi"),
    _cat("television", "television: TV, Netflix, series", "tv|television|telly|fernseher|fernsehen|tele|"
         "television|tele|televisor", "tv|television|telly|netflix|smart tv|inch|series|binge|fernseher|"
         "fernsehen|serie|tele|televisor|televiseur|ecran"),
    _cat("work", "working: the office, reports, deadlines, meetings, clients",
         "work|working|arbeit|arbeiten|trabajar|trabajo|travailler|travail",
         "worked|working|office|report|deadline|meeting|meetings|emails|client|clients|shift|overtime|boss|"
         "presentation|project|gearbeitet|buro|bericht|trabaje|oficina|informe|travaille|bureau|rapport"),
    _cat("late_night", "staying up late at night, going to bed after midnight",
         "bed|go to bed|late|late nights|bett|ins bett|acostarse|cama|coucher|me coucher",
         "midnight|a.m|up until|stayed up|all night|late night|small hours|mitternacht|nachts|madrugada|"
         "medianoche|minuit|nuit blanche"),
    _cat("online_shopping", "shopping online: Amazon, deliveries", "amazon|online shopping|shopping online",
         "amazon|amazon prime|prime|ordered online|delivery|parcel"),
)

CATEGORIES: dict[str, Category] = {c.name: c for c in _TABLE}
"""Every category by name."""

IDENTITIES: dict[str, tuple[str, ...]] = {
    "vegetarian": ("meat", "fish"), "vegetarier": ("meat", "fish"), "vegetarierin": ("meat", "fish"),
    "vegetariano": ("meat", "fish"), "vegetariana": ("meat", "fish"), "vegetarien": ("meat", "fish"),
    "vegetarienne": ("meat", "fish"), "veggie": ("meat", "fish"),
    "vegan": ("meat", "fish", "dairy", "eggs"), "veganer": ("meat", "fish", "dairy", "eggs"),
    "veganerin": ("meat", "fish", "dairy", "eggs"), "vegano": ("meat", "fish", "dairy", "eggs"),
    "vegana": ("meat", "fish", "dairy", "eggs"), "vegane": ("meat", "fish", "dairy", "eggs"),
    "vegetalien": ("meat", "fish", "dairy", "eggs"), "vegetalienne": ("meat", "fish", "dairy", "eggs"),
    "pescatarian": ("meat",), "pescetarian": ("meat",), "pescetarier": ("meat",), "pescetariano": ("meat",),
    "pescetarien": ("meat",),
    "halal": ("pork", "alcohol"), "kosher": ("pork", "shellfish"), "koscher": ("pork", "shellfish"),
    "casher": ("pork", "shellfish"),
    "sober": ("alcohol", "drugs"), "teetotal": ("alcohol",), "teetotaler": ("alcohol",),
    "teetotaller": ("alcohol",), "nuchtern": ("alcohol",), "abstemio": ("alcohol",), "abstemia": ("alcohol",),
    "abstinent": ("alcohol",), "abstinente": ("alcohol",), "sobrio": ("alcohol",), "sobria": ("alcohol",),
    "celiac": ("gluten",), "coeliac": ("gluten",), "zoliakie": ("gluten",), "zoliakiker": ("gluten",),
    "celiaco": ("gluten",), "celiaca": ("gluten",), "coeliaque": ("gluten",), "celiaque": ("gluten",),
    "diabetic": ("sweets",), "diabetiker": ("sweets",), "diabetico": ("sweets",), "diabetica": ("sweets",),
    "diabetique": ("sweets",), "keto": ("carbs", "sweets"),
    "claustrophobic": ("enclosed",), "klaustrophobisch": ("enclosed",), "claustrofobico": ("enclosed",),
    "claustrofobica": ("enclosed",), "claustrophobe": ("enclosed",),
    "non-smoker": ("tobacco",), "nichtraucher": ("tobacco",), "nichtraucherin": ("tobacco",),
    "no fumador": ("tobacco",), "non-fumeur": ("tobacco",), "non-fumeuse": ("tobacco",),
    "plant-based": ("meat", "fish", "dairy", "eggs"), "plant based": ("meat", "fish", "dairy", "eggs"),
    "lactose intolerant": ("dairy",), "laktoseintolerant": ("dairy",), "intolerante a la lactosa": ("dairy",),
    "intolerant au lactose": ("dairy",), "intolerante au lactose": ("dairy",),
}
"""Identity words of a diet or abstention and the categories they rule out (general knowledge)."""

VERB_CATEGORIES: dict[str, tuple[str, ...]] = {
    "smoke": ("tobacco",), "drink": ("alcohol",), "fly": ("flying",), "drive": ("driving",),
    "gamble": ("gambling",), "run": ("running",), "swim": ("water",), "bet": ("gambling",), "vape": ("tobacco",),
    "eat": ("food",), "work": ("work",),
}
"""What a negated verb without an object rules out ("I don't drink" is about alcohol, "Ich fliege nie" flying)."""

_FOOD = ("noun.food",)
_ANIMAL = ("noun.animal",)
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # category: (WordNet synsets whose every kind it rules out, the lexicographer files its members come from)
    "meat": (("meat.n.01",), _FOOD),
    "pork": (("pork.n.01", "ham.n.01", "bacon.n.01", "sausage.n.01"), _FOOD),
    "poultry": (("poultry.n.02", "bird.n.02"), _FOOD),
    "fish": (("fish.n.02", "seafood.n.01"), _FOOD),
    "shellfish": (("shellfish.n.01",), _FOOD),
    "dairy": (("dairy_product.n.01", "ice_cream.n.01"), _FOOD),
    "eggs": (("egg.n.02", "omelet.n.01"), _FOOD),
    "gluten": (("bread.n.01", "pasta.n.02", "baked_goods.n.01", "cracker.n.01", "beer.n.01"), _FOOD),
    "sweets": (("sweet.n.03", "dessert.n.01", "cake.n.03", "cookie.n.01", "chocolate.n.02", "sugar.n.01",
                "soft_drink.n.01"), _FOOD),
    "sweet_drinks": (("soft_drink.n.01",), _FOOD),
    "nuts": (("edible_nut.n.01",), _FOOD),
    "carbs": (("starches.n.01", "pasta.n.02", "potato.n.01", "rice.n.01", "cereal.n.03"), _FOOD),
    "food": (("food.n.02", "nutriment.n.01", "meal.n.01"), _FOOD),
    "alcohol": (("alcohol.n.01",), _FOOD),
    "beer": (("beer.n.01",), _FOOD),
    "wine": (("wine.n.01",), _FOOD),
    "spirits": (("liquor.n.01", "cocktail.n.01"), _FOOD),
    "coffee": (("coffee.n.01",), _FOOD),
    "tobacco": (("tobacco.n.01", "smoking.n.01"), ()),
    "drugs": (("controlled_substance.n.01", "hallucinogen.n.01"), ()),
    "gambling": (("gambling.n.01", "gambling_house.n.01"), ()),
    "heights": (("skyscraper.n.01", "cliff.n.01", "ferris_wheel.n.01", "parachuting.n.01",
                 "mountain_climbing.n.01", "rock_climbing.n.01", "hang_gliding.n.01"), ()),
    "flying": (("aircraft.n.01", "air_travel.n.01", "airport.n.01", "airline.n.01", "airline.n.02"), ()),
    "water": (("swimming.n.01", "water_sport.n.01", "swimming_pool.n.01", "boat.n.01"), ()),
    "dogs": (("dog.n.01",), _ANIMAL),
    "cats": (("cat.n.01",), _ANIMAL),
    "spiders": (("spider.n.01", "arachnid.n.01"), _ANIMAL),
    "snakes": (("snake.n.01",), _ANIMAL),
    "horses": (("horse.n.01",), _ANIMAL),
    "birds": (("bird.n.01",), _ANIMAL),
    "enclosed": (("elevator.n.01", "tunnel.n.01", "cave.n.01"), ()),
    "needles": (("injection.n.01", "inoculation.n.01", "vaccine.n.01", "tattoo.n.02"), ()),
    "crowds": (("crowd.n.01", "concert.n.01", "stadium.n.01"), ()),
    "public_speaking": (("address.n.03", "lecture.n.01"), ()),
    "running": (("footrace.n.01", "jogging.n.01"), ()),
    "television": (("television.n.01", "television.n.02", "television_receiver.n.01", "television_program.n.01"), ()),
}
"""Each category as WordNet synsets (:mod:`neusym.knowledge.isa`): an event naming any kind of them names the
category, though the lexicon above lists only some members ("merlot" is a red wine, "scampi" a shellfish dish, a
"dalmatian" a dog, a "glider" an aircraft). The lexicographer files are the senses expected of a member (a diet is
about the *food* sense of "lamb", "turkey", "pheasant"). Categories WordNet has nothing useful for (social media,
work, late nights, driving - where "cab" would be a car one only rides in) have no entry."""
