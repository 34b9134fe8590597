"""Build the project's built-in demo dataset: a small, invented world for multi-hop QA.

Everything here is fictional and written for this project: four countries (Kestria,
Orvland, Marenthe, Dalsgor), their rivers, towns, people, companies, bands, books,
colleges and ships. The passages form one small knowledge graph; the questions are
reasoning chains over it (2, 3 and 4 hops) plus comparison questions. Many passages
are gold for no question and are there to confuse: same surnames, similar place names
("Drusk" and "Drusk (Orvland)", "Harl" and "Harlow", "Tessary" and "Kessary", the "Vell"
and the "Little Vell"), and entities with the same relation to different things.

Run from the repository root:

    python scripts/build_demo.py

It writes ``passages.jsonl`` and ``questions.jsonl`` into ``datamodules/demo/``, where the package
ships them, and the demo's hand-written knowledge graph (``TRIPLES``) into the ``KGStore`` folder
``datamodules/demo/kg/`` (source
"manual"; the folder is deleted and rewritten on each run), all deterministically, and
validates them (raising ``ValueError`` on any problem). With the KG in place, chains can be
built without running an LLM over the corpus (``prepare.py kg`` still can).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from core.text import normalize_space  # noqa: E402
from core.types import Passage, Question, Triple, triple_key  # noqa: E402
from datamodules.loaders import DEMO_DIR as HERE  # noqa: E402
from kg.store import KGStore  # noqa: E402

PASSAGES_FILE = HERE / "passages.jsonl"
QUESTIONS_FILE = HERE / "questions.jsonl"
KG_DIR = HERE / "kg"
KG_SOURCE = "manual"

# ---------------------------------------------------------------------------
# Passages: (title, [sentences]). Each starts with its title entity.
# ---------------------------------------------------------------------------

PASSAGES: list[tuple[str, list[str]]] = [
    # --- Countries ---------------------------------------------------------
    ("Kestria", [
        "Kestria is a republic on the northern shore of the Grisel Sea.",
        "Its capital and largest city is Harrowmere.",
        "Kestria became a republic in 1871, when Duke Aurel abdicated, and Ada Renwick was elected its first President.",
        "To the east, the Serin River forms most of its border with Orvland.",
        "The Kestrian economy was long built on wool, brewing and shipbuilding.",
    ]),
    ("Orvland", [
        "Orvland is a landlocked kingdom lying east of Kestria and south of Dalsgor.",
        "Its capital is Tessary, a city on the shore of Lake Ammer.",
        "The kingdom has been ruled by the House of Odo since the fifteenth century.",
        "Orvland's currency is the orvel, and its chief exports are glass, paper and timber.",
    ]),
    ("Marenthe", [
        "Marenthe is a maritime republic on the southern shore of the Grisel Sea.",
        "Its capital is Port Vaudrin.",
        "Marenthe has been known for its shipyards since the early nineteenth century.",
        "The country's principal rivers are the Tamber and the Ebbren.",
    ]),
    ("Dalsgor", [
        "Dalsgor is a mountainous constitutional monarchy to the north of Orvland.",
        "Its capital and largest city is Ulmstead.",
        "Much of the country is covered by the Ulm Range, whose mines have produced iron and copper for centuries.",
        "Dalsgor's northern coast faces the Haldor Sea.",
    ]),
    # --- Seas and lakes ----------------------------------------------------
    ("Grisel Sea", [
        "The Grisel Sea is an inland sea bordered by Kestria to the north and Marenthe to the south.",
        "Its largest port is Port Vaudrin, on the Bay of Sollis.",
        "The Vell empties into the Grisel Sea at Harrowmere, and the Tamber and the Ebbren reach it through the Bay of Sollis.",
        "The sea has supported a herring fishery since medieval times.",
    ]),
    ("Bay of Sollis", [
        "The Bay of Sollis is a wide arm of the Grisel Sea on the coast of Marenthe.",
        "Port Vaudrin stands on its western shore, and the fishing towns of Sollis and Ebbmouth lie on its eastern side.",
        "Both the Tamber and the Ebbren empty into the bay.",
    ]),
    ("Haldor Sea", [
        "The Haldor Sea is a cold sea off the northern coast of Dalsgor.",
        "Its shores are frozen for up to four months each winter.",
        "The Caddow River flows into it at the port of Vessholm.",
        "Much of its eastern coast was first charted by the expedition of the Stormwren between 1913 and 1915.",
    ]),
    ("Lake Ammer", [
        "Lake Ammer is the largest lake in Orvland, covering about 610 square kilometres.",
        "It is fed mainly by the Osk, which enters from the north, and it is drained at its southern end by the Serin River.",
        "The capital, Tessary, stands on its western shore, and the fishing village of Drusk lies on its eastern shore.",
        "Paddle steamers have carried passengers across the lake since 1867.",
    ]),
    ("Aldry Tarn", [
        "Aldry Tarn is a small mountain lake below the summit of Mount Aldry in the Korrin Hills of Kestria.",
        "It is often described as the source of the Vell, although the river actually rises from springs two kilometres to the south.",
        "The tarn is a popular destination for walkers from Pellory.",
    ]),
    ("Lake Vessen", [
        "Lake Vessen is a mountain lake in the Ulm Range of Dalsgor.",
        "It is drained by the Vess, a short tributary of the Caddow River.",
        "A hydroelectric dam was built at its outlet in 1952.",
    ]),
    # --- Mountains and hills -----------------------------------------------
    ("Korrin Hills", [
        "The Korrin Hills are a range of low mountains in eastern Kestria.",
        "Their highest point is Mount Aldry, at 1,412 metres.",
        "The Vell rises on the southern slopes of the range.",
        "The hills were mined for lead and silver from the twelfth century, and their main town is Pellory.",
    ]),
    ("Mount Aldry", [
        "Mount Aldry is the highest peak of the Korrin Hills in eastern Kestria, rising to 1,412 metres.",
        "The mountain is named after Aldry, a shepherd of local legend.",
        "Its summit has been the site of an astronomical observatory since 1908.",
    ]),
    ("Ulm Range", [
        "The Ulm Range is a chain of mountains in Dalsgor that runs along its border with Orvland.",
        "Both the Osk and the Caddow rise in the range, the Osk flowing south into Orvland and the Caddow flowing north across Dalsgor.",
        "The mining town of Karsk lies in a high valley of the range.",
        "Its highest summit is Mount Hesk, at 2,908 metres.",
    ]),
    ("Mount Hesk", [
        "Mount Hesk is the highest mountain of the Ulm Range and of Dalsgor, at 2,908 metres.",
        "It was first climbed in 1871 by a party led by the surveyor Anders Kray.",
        "A glacier on its northern face feeds the upper Caddow River.",
    ]),
    ("Corva Hills", [
        "The Corva Hills are a range of wooded hills in eastern Marenthe.",
        "The Ebbren River rises among them.",
        "The hill town of Corvaine stands on their western edge.",
    ]),
    # --- Rivers ------------------------------------------------------------
    ("Vell River", [
        "The Vell River is the longest river in Kestria, flowing 310 kilometres from the Korrin Hills to the Grisel Sea.",
        "From its source it runs west past Brenn, where it receives the Serin, and then through Drusk and Ardlow.",
        "The Vell flows into the Grisel Sea at Harrowmere.",
        "The broad farmland along its middle course is known as the Vell valley.",
    ]),
    ("Serin River", [
        "The Serin River is a river of Orvland and Kestria, about 140 kilometres long.",
        "It drains Lake Ammer at its southern end and flows south-west, forming most of the border between the two countries.",
        "The Kestrian town of Harl and the Orvlandish town of Harlow face each other across the river.",
        "The Serin joins the Vell at Brenn.",
    ]),
    ("Osk River", [
        "The Osk River is a river of Dalsgor and Orvland, about 180 kilometres long.",
        "It rises in the Ulm Range and flows south through Ruddow, Oskbridge and Vennick.",
        "The Osk empties into Lake Ammer from the north.",
        "At Oskbridge it receives its main tributary, the Little Vell.",
    ]),
    ("Little Vell", [
        "The Little Vell is a short river in Orvland and a tributary of the Osk.",
        "Despite its name, it has no connection with the Vell of Kestria; the name comes from an old Orvlandish word for a mill stream.",
        "It flows for 42 kilometres past the paper-making town of Halvers and joins the Osk at Oskbridge.",
    ]),
    ("Tamber River", [
        "The Tamber River is the principal river of Marenthe, about 220 kilometres long.",
        "It flows north through the market town of Tamberford and empties into the Bay of Sollis at Port Vaudrin.",
        "The lower Tamber has been lined with shipyards since the 1820s.",
    ]),
    ("Ebbren River", [
        "The Ebbren River is a river in eastern Marenthe, about 70 kilometres long.",
        "It rises in the Corva Hills, passes the hill town of Corvaine and empties into the Bay of Sollis at Ebbmouth.",
        "Its valley is known for apple orchards and cider.",
    ]),
    ("Caddow River", [
        "The Caddow River is the longest river in Dalsgor.",
        "It rises in the Ulm Range and flows north through Ulmstead, Kessary and Drossel.",
        "The Caddow reaches the Haldor Sea at Vessholm.",
        "Barges can navigate the river below Ulmstead.",
    ]),
    # --- Provinces ---------------------------------------------------------
    ("Vellmark", [
        "Vellmark is a province of Kestria covering the middle and upper Vell valley.",
        "Its capital is Ardlow, and its other towns include Drusk and Brenn.",
        "The province was created in 1872, a year after Kestria became a republic.",
    ]),
    ("Saltmoor", [
        "Saltmoor is a coastal province of Kestria along the Grisel Sea.",
        "Its capital is Keswin.",
        "The province takes its name from the salt marshes that line much of its shore.",
    ]),
    # --- Towns of Kestria --------------------------------------------------
    ("Harrowmere", [
        "Harrowmere is the capital and largest city of Kestria.",
        "The city lies at the mouth of the Vell on the Grisel Sea.",
        "It is the seat of Penmarrow College and was for over a century the home of the Harrowmere Shipbuilding Company.",
        "Its harbour fort was built in the sixteenth century to guard against raiders.",
    ]),
    ("Drusk", [
        "Drusk is a market town in the Vell valley in Kestria, about 40 kilometres upstream of Ardlow.",
        "It has held a weekly wool market since 1530.",
        "The town is home to the football club FC Drusk.",
        "It should not be confused with the fishing village of Drusk on Lake Ammer in Orvland.",
    ]),
    ("Ardlow", [
        "Ardlow is a town on the Vell in Kestria and the capital of the province of Vellmark.",
        "It grew rapidly after the Kestrian Northern Railway reached it in 1858.",
        "Ardlow is home to the Ardlow Institute of Technology, the brewery Ostrel Brewing and the football club Ardlow Rovers.",
        "St. Benna's Cathedral, completed in 1402, stands in its old market square.",
    ]),
    ("Brenn", [
        "Brenn is a river port in the province of Vellmark in Kestria.",
        "It stands at the confluence of the Serin and the Vell.",
        "Brenn Brewery operated in the town from 1902 to 1979, and an eighteenth-century lock on the Vell still serves barges there.",
    ]),
    ("Harl", [
        "Harl is a small town in Kestria on the western bank of the Serin River.",
        "It faces the Orvlandish town of Harlow across the river, and the two are linked by a ferry.",
        "Harl is known for its willow basket weaving.",
    ]),
    ("Keswin", [
        "Keswin is a port town on the Grisel Sea coast of Kestria and the capital of the province of Saltmoor.",
        "It is the home of Velsing Shipyards and the Velsing Maritime Museum.",
        "Before shipbuilding arrived, the town lived from rope making and salt panning.",
    ]),
    ("Pellory", [
        "Pellory is the main town of the Korrin Hills in eastern Kestria.",
        "It grew up around lead and silver mines that were worked from the twelfth century until 1961.",
        "The rare mineral varronite was first described from the Pellory mines in 1936.",
    ]),
    ("Ostrel", [
        "Ostrel is a hamlet in the Korrin Hills of Kestria with fewer than a hundred inhabitants.",
        "The brewery Ostrel Brewing in Ardlow is named after it.",
        "The hamlet has a small chapel dating from 1688.",
    ]),
    # --- Towns of Orvland --------------------------------------------------
    ("Tessary", [
        "Tessary is the capital and largest city of Orvland.",
        "It lies on the western shore of Lake Ammer.",
        "The city is home to Kellmarsh University, the oldest university in Orvland, and to the Tessary Conservatory.",
        "Each autumn Tessary hosts the Ammer Lantern Festival.",
    ]),
    ("Vennick", [
        "Vennick is a town on the Osk River in Orvland.",
        "It is known for its glassworks, the oldest of which opened in 1714.",
        "The chemist Lena Varro was born in Vennick.",
    ]),
    ("Oskbridge", [
        "Oskbridge is a town in Orvland named after its fourteenth-century stone bridge over the Osk River.",
        "The Little Vell joins the Osk just below the town.",
        "The town holds a horse market every spring.",
    ]),
    ("Ruddow", [
        "Ruddow is a railway town on the upper Osk River in northern Orvland.",
        "It became a junction of the Osk Valley Railway in 1879.",
        "The brewer Piet Lorrow was born there.",
    ]),
    ("Halvers", [
        "Halvers is a town in Orvland on the Little Vell, a tributary of the Osk.",
        "It has been a centre of paper making since the seventeenth century.",
        "Its largest paper mill was owned for many years by the Lorn family.",
    ]),
    ("Drusk (Orvland)", [
        "Drusk is a fishing village in Orvland on the eastern shore of Lake Ammer.",
        "It is the home of the Lake Ammer Brewing Company, founded in 1908.",
        "The poet Piers Dunmore and the brewer Karl Vessen were born in the village.",
        "It should not be confused with the Kestrian market town of Drusk in the Vell valley.",
    ]),
    ("Harlow", [
        "Harlow is a town in Orvland on the eastern bank of the Serin River, opposite the Kestrian town of Harl.",
        "Its customs house, built in 1790, is now a museum of the border.",
        "The town is known for its autumn horse fair.",
    ]),
    ("Brennick", [
        "Brennick is a village in Orvland near the point where the Osk enters Lake Ammer.",
        "Its name is often confused with that of the Kestrian river port of Brenn.",
        "The village is known for its reed thatching.",
    ]),
    # --- Towns of Marenthe -------------------------------------------------
    ("Port Vaudrin", [
        "Port Vaudrin is the capital of Marenthe and the largest port on the Grisel Sea.",
        "It lies at the mouth of the Tamber on the western shore of the Bay of Sollis.",
        "The city is home to Tamber Yards, the Port Vaudrin Naval Academy and the record label Cinder Records.",
    ]),
    ("Tamberford", [
        "Tamberford is a market town on the Tamber River in Marenthe.",
        "It grew up around a ford used by cattle drovers and received a town charter in 1611.",
        "The novelist Sabine Orrel was born in Tamberford.",
    ]),
    ("Corvaine", [
        "Corvaine is a hill town in eastern Marenthe, on the Ebbren River at the western edge of the Corva Hills.",
        "It is known for its cider and its walled old quarter.",
        "The shipbuilder Lucan Dorrice and the singer Jules Amary were both born in Corvaine.",
    ]),
    ("Ebbmouth", [
        "Ebbmouth is a fishing port in Marenthe at the mouth of the Ebbren River on the Bay of Sollis.",
        "It is known for its smoked herring.",
        "The record producer Remy Castell was born in Ebbmouth.",
    ]),
    ("Sollis", [
        "Sollis is a small fishing town on the eastern shore of the Bay of Sollis in Marenthe.",
        "The bay takes its name from the town, which is recorded as early as 1204.",
        "Its lighthouse has guided ships into the bay since 1859.",
    ]),
    # --- Towns of Dalsgor --------------------------------------------------
    ("Ulmstead", [
        "Ulmstead is the capital and largest city of Dalsgor.",
        "The city lies on the Caddow River in the centre of the country.",
        "It is home to Brannock University and to the royal palace of Dalsgor.",
        "The astronomer Anselm Kray was born in Ulmstead.",
    ]),
    ("Karsk", [
        "Karsk is a mining town in a high valley of the Ulm Range in Dalsgor.",
        "Copper has been mined there since the fifteenth century.",
        "The town has a mining museum in its old smelting house.",
    ]),
    ("Drossel", [
        "Drossel is a town on the lower Caddow River in Dalsgor.",
        "It is known for its timber trade and its summer river regatta.",
        "The painter Teodor Velsing was born in Drossel.",
    ]),
    ("Kessary", [
        "Kessary is a town in Dalsgor on the Caddow River, between Ulmstead and Drossel.",
        "Its name is often confused with that of Tessary, the capital of Orvland.",
        "Its ironworks, founded in 1866, were once the largest in Dalsgor.",
    ]),
    ("Vessholm", [
        "Vessholm is a port town in Dalsgor at the mouth of the Caddow River on the Haldor Sea.",
        "Its harbour is kept open in winter by icebreakers.",
        "The Stormwren sailed from Vessholm on her expedition of 1913.",
    ]),
    ("Drusk Moor", [
        "Drusk Moor is an upland heath in the Ulm Range of Dalsgor.",
        "Despite the similar name, it has no link with the Kestrian town of Drusk; the name comes from an old Dalsgorian word for thrush.",
        "The moor is a protected breeding ground for curlews.",
    ]),
    # --- Rulers and statesmen ----------------------------------------------
    ("Ada Renwick", [
        "Ada Renwick (1820-1894) was a Kestrian lawyer and politician who led the reform movement of the 1860s.",
        "She was born in Ardlow and studied law at Penmarrow College.",
        "She was head of state from 1871 to 1878.",
    ]),
    ("Duke Aurel of Kestria", [
        "Duke Aurel of Kestria (1820-1889) was the last Duke of Kestria, reigning from 1849 until his abdication in 1871.",
        "He spent his final years in exile in Tessary.",
        "His palace in Harrowmere now houses the national parliament.",
    ]),
    ("Renwick Bridge", [
        "The Renwick Bridge is a road bridge over the Vell in Harrowmere, completed in 1899.",
        "It is named after Ada Renwick, the first President of Kestria.",
        "It was designed by the engineer Carl Dorrice.",
    ]),
    ("Odo II of Orvland", [
        "Odo II of Orvland (1502-1561) was King of Orvland from 1531 until his death.",
        "He reformed the royal courts and founded a university in his capital in 1540.",
        "He was succeeded by his daughter, Queen Ermina.",
    ]),
    ("Queen Ermina of Orvland", [
        "Queen Ermina of Orvland (1530-1590) reigned from 1561 to 1590.",
        "She was the daughter of King Odo II.",
        "During her reign the royal palace in Tessary was rebuilt after a fire.",
    ]),
    ("House of Odo", [
        "The House of Odo is the royal family of Orvland.",
        "It came to the throne in 1467 with King Odo I.",
        "Its members have included King Odo II, Queen Ermina and Queen Sigrun.",
    ]),
    ("Queen Sigrun of Orvland", [
        "Queen Sigrun of Orvland (1819-1888) reigned from 1840 until her death.",
        "Her reign saw the building of the first railways in Orvland.",
        "A paddle steamer on Lake Ammer was named in her honour.",
    ]),
    ("Ivar Brannock", [
        "Ivar Brannock (1851-1919) was a Dalsgorian statesman who served as prime minister of Dalsgor from 1894 to 1906.",
        "He was born in Kessary.",
        "He campaigned for a national university, which was founded two years after his death and named after him.",
    ]),
    ("Johan Velsing", [
        "Johan Velsing (1880-1955) was a Kestrian lawyer and politician who served as President of Kestria from 1931 to 1939.",
        "He was born in Keswin, the grandson of the shipbuilder Marta Velsing, and studied law at Penmarrow College.",
        "In 1921 he founded the Velsing Maritime Museum in his home town.",
    ]),
    ("Orvel", [
        "The orvel is the currency of Orvland.",
        "It was introduced in 1872, replacing the old royal mark.",
        "It is divided into one hundred pennings.",
    ]),
    # --- Breweries and brewers ---------------------------------------------
    ("Ostrel Brewing", [
        "Ostrel Brewing is a brewery in Ardlow, Kestria.",
        "It was founded in 1894 by Ana Corvel and is named after the hamlet of Ostrel in the Korrin Hills.",
        "Its best-known beer is Gray Stag, a dark ale first brewed in 1901.",
        "The brewery was run by the Corvel family until 1962.",
    ]),
    ("Ana Corvel", [
        "Ana Corvel (1861-1930) was a Kestrian brewer and businesswoman.",
        "She was born in Drusk and learned brewing from an uncle in Harrowmere.",
        "In 1894 she founded Ostrel Brewing in Ardlow, naming it after her mother's home village.",
        "She was not related to the rope maker Mattias Corvel.",
    ]),
    ("Lise Corvel", [
        "Lise Corvel (1889-1970) was a Kestrian brewer, the daughter of Ana Corvel.",
        "She was born in Ardlow.",
        "She ran Ostrel Brewing from her mother's death in 1930 until 1962.",
    ]),
    ("Mattias Corvel", [
        "Mattias Corvel (1812-1879) was a Kestrian rope maker and merchant.",
        "He was born in Keswin and founded the rope works Corvel & Daughters there in 1849.",
        "His ropes rigged many of the ships built at Keswin.",
    ]),
    ("Corvel & Daughters", [
        "Corvel & Daughters is a rope-making firm in Keswin, Kestria, founded in 1849 by Mattias Corvel.",
        "It took its name from his three daughters, who ran the firm after his death.",
        "The firm still makes mooring lines for ships.",
    ]),
    ("Anja Corvel", [
        "Anja Corvel (born 1950) is a retired Kestrian racing cyclist.",
        "She was born in Ardlow and won the Kestrian road championship four times.",
        "She is not related to the brewing Corvel family.",
    ]),
    ("Gray Stag (beer)", [
        "Gray Stag is a dark ale brewed by Ostrel Brewing in Ardlow since 1901.",
        "It is named after a stag said to roam the Korrin Hills.",
        "The beer has no connection with the novel The Gray Stag.",
    ]),
    ("Brenn Brewery", [
        "Brenn Brewery was a brewery in Brenn, Kestria, founded in 1902 by Oskar Tallow.",
        "It was known for its pale lager, Serin Gold.",
        "The brewery closed in 1979, and its buildings now house a market hall.",
    ]),
    ("Oskar Tallow", [
        "Oskar Tallow (1868-1941) was a Kestrian brewer.",
        "He was born in Pellory and worked in the lead mines before training as a brewer in Tessary.",
        "In 1902 he founded Brenn Brewery, which he ran until his death.",
    ]),
    ("Lake Ammer Brewing Company", [
        "The Lake Ammer Brewing Company is a brewery in Drusk, a village on Lake Ammer in Orvland.",
        "It was founded in 1908 by Piet Lorrow.",
        "The company brews a wheat beer flavoured with lake reeds.",
    ]),
    ("Piet Lorrow", [
        "Piet Lorrow (1875-1950) was an Orvlandish brewer.",
        "He was born in Ruddow and worked for many years on the timber rafts of the Osk.",
        "In 1908 he founded the Lake Ammer Brewing Company in the village of Drusk on Lake Ammer.",
    ]),
    ("Saltmoor Brewing Company", [
        "The Saltmoor Brewing Company is a brewery in Keswin, Kestria.",
        "It was founded in 1899 by Karl Vessen, an Orvlandish brewer who had settled on the coast.",
        "The company is known for its oyster stout.",
    ]),
    ("Karl Vessen", [
        "Karl Vessen (1870-1938) was an Orvlandish-born brewer who worked in Kestria.",
        "He was born in Drusk, a fishing village on Lake Ammer, and moved to Keswin in 1893.",
        "In 1899 he founded the Saltmoor Brewing Company.",
    ]),
    # --- Shipbuilding and ships --------------------------------------------
    ("Velsing Shipyards", [
        "Velsing Shipyards is a shipbuilding company based in Keswin, Kestria.",
        "It was founded in 1851 by Marta Velsing.",
        "Its ships include the steamship Aldry Star and the river ferry Vell Maiden.",
        "The company remained in the Velsing family until 1957.",
    ]),
    ("Marta Velsing", [
        "Marta Velsing (1815-1890) was a Kestrian shipbuilder.",
        "She was born in Brenn, the daughter of a river barge builder.",
        "In 1851 she founded Velsing Shipyards in Keswin, which became the largest shipyard in Kestria.",
    ]),
    ("Marta Velsing (ferry)", [
        "The Marta Velsing is a car ferry launched in 1965 by Velsing Shipyards and named after the company's founder.",
        "She runs between Keswin and Port Vaudrin.",
        "She replaced an older steamer on the route.",
    ]),
    ("Velsing Maritime Museum", [
        "The Velsing Maritime Museum is a museum of ships and seafaring in Keswin, Kestria.",
        "It was founded in 1921 by Johan Velsing.",
        "Its collection includes the bell of the Aldry Star, recovered by divers in 1952.",
    ]),
    ("Eira Velsing", [
        "Eira Velsing (1911-1990) was a Kestrian architect, the daughter of President Johan Velsing.",
        "She was born in Harrowmere.",
        "She designed the new wing of the Velsing Maritime Museum, opened in 1962, and the Tessary Opera House.",
    ]),
    ("Teodor Velsing", [
        "Teodor Velsing (1894-1968) was a Dalsgorian painter known for his winter landscapes of the Ulm Range.",
        "He was born in Drossel and studied painting in Ulmstead.",
        "He was not related to the Velsing family of Kestrian shipbuilders.",
    ]),
    ("Velsing Cup", [
        "The Velsing Cup is a sailing race from Keswin across the Grisel Sea to Port Vaudrin.",
        "It was first held in 1895, with a trophy given by Velsing Shipyards.",
        "The race is held every two years.",
    ]),
    ("Aldry Star", [
        "The Aldry Star was a passenger steamship launched in 1889 by Velsing Shipyards.",
        "She carried passengers across the Grisel Sea under the command of Captain Bram Okonny.",
        "The ship sank in a storm off the Kestrian coast in 1903.",
    ]),
    ("Bram Okonny", [
        "Bram Okonny (1851-1903) was a Kestrian sea captain.",
        "Born in Harrowmere, he went to sea at the age of fourteen.",
        "He commanded the steamship Aldry Star from her launch until 1903, when he died in her sinking.",
    ]),
    ("Vell Maiden", [
        "The Vell Maiden is a river ferry built in 1898 by Velsing Shipyards.",
        "She carries passengers on the Vell between Ardlow and Harrowmere.",
        "Her longest-serving captain was Rosa Tennick.",
    ]),
    ("Rosa Tennick", [
        "Rosa Tennick (1902-1979) was a Kestrian river pilot and ferry captain.",
        "She was born in Ardlow and commanded the ferry Vell Maiden from 1931 to 1967.",
        "She was the first woman licensed as a pilot on the Vell.",
    ]),
    ("Harrowmere Shipbuilding Company", [
        "The Harrowmere Shipbuilding Company was a shipbuilder in Harrowmere, Kestria.",
        "It was founded in 1860 by Edvard Sallow.",
        "Its best-known ship was the research vessel Stormwren, launched in 1912.",
        "The company closed in 1984.",
    ]),
    ("Edvard Sallow", [
        "Edvard Sallow (1822-1899) was a Kestrian shipbuilder.",
        "He was born in Harrowmere and worked as a yard manager at Velsing Shipyards in Keswin.",
        "In 1860 he founded the Harrowmere Shipbuilding Company.",
    ]),
    ("Petra Sallow", [
        "Petra Sallow (born 1961) is a Kestrian former swimmer who won the Grisel Sea crossing race three times.",
        "She was born in Keswin.",
        "She is a descendant of the shipbuilder Edvard Sallow.",
    ]),
    ("Stormwren", [
        "The Stormwren was a Kestrian research vessel launched in 1912 by the Harrowmere Shipbuilding Company.",
        "She was commanded by the explorer Halvard Dune on his expedition to the Haldor Sea.",
        "The ship was broken up in 1948.",
    ]),
    ("Halvard Dune", [
        "Halvard Dune (1878-1934) was a Kestrian polar explorer.",
        "He was born in Sollis, where his father served as a customs officer, and grew up in Keswin.",
        "He commanded the Stormwren on the expedition of 1913 to 1915 that charted the eastern coast of the Haldor Sea.",
    ]),
    ("Tamber Yards", [
        "Tamber Yards is a shipbuilding company in Port Vaudrin, Marenthe, on the lower Tamber River.",
        "It was founded in 1822 by Lucan Dorrice.",
        "The yard built sailing ships at first and turned to iron steamers in the 1850s.",
    ]),
    ("Lucan Dorrice", [
        "Lucan Dorrice (1790-1861) was a Marenthian shipbuilder.",
        "He was born in Corvaine and apprenticed to a ship's carpenter in Port Vaudrin.",
        "In 1822 he founded Tamber Yards.",
    ]),
    ("Queen Sigrun (ship)", [
        "The Queen Sigrun is a paddle steamer that has carried passengers on Lake Ammer since 1867.",
        "She was built in 1866 by Tamber Yards in Marenthe and carried in sections to Tessary.",
        "The steamer is named after Queen Sigrun of Orvland.",
    ]),
    ("Gray Heron", [
        "The Gray Heron was an iron steamship built by Tamber Yards in 1871.",
        "She carried mail between Port Vaudrin and Keswin until 1902.",
        "She was commanded for many years by Captain Ines Dorrice, a granddaughter of the yard's founder.",
    ]),
    ("Sollis Lighthouse", [
        "Sollis Lighthouse is a lighthouse on the eastern shore of the Bay of Sollis in Marenthe.",
        "It was first lit in 1859.",
        "Its keeper's house is now a small museum.",
    ]),
    ("Port Vaudrin Naval Academy", [
        "The Port Vaudrin Naval Academy is the officer school of the navy of Marenthe.",
        "It was founded in 1803 in Port Vaudrin.",
        "Its training ship is moored at the mouth of the Tamber.",
    ]),
    # --- Publishing and writers --------------------------------------------
    ("Greywater Press", [
        "Greywater Press is a publishing house based in Tessary, Orvland.",
        "It was founded in 1903 by Hedda Lorn.",
        "The press is known for literary fiction and for translations from Kestrian and Marenthian writers.",
    ]),
    ("Hedda Lorn", [
        "Hedda Lorn (1876-1952) was an Orvlandish publisher.",
        "She was born in Halvers, where her family owned a paper mill, and studied at Kellmarsh University.",
        "In 1903 she founded Greywater Press in Tessary and directed it for almost fifty years.",
    ]),
    ("Mina Lorn", [
        "Mina Lorn (1899-1970) was a Kestrian painter.",
        "She was born in Harl and studied in Tessary.",
        "In 1931 she founded the Harrowmere Academy of Art.",
    ]),
    ("Harrowmere Academy of Art", [
        "The Harrowmere Academy of Art is an art school in Harrowmere, Kestria.",
        "It was founded in 1931 by the painter Mina Lorn.",
        "It occupies a former customs warehouse near the harbour.",
    ]),
    ("The Salt Orchard", [
        "The Salt Orchard is a 1934 novel by Elin Marsk.",
        "It follows three generations of a family of orchard keepers on a windswept coast.",
        "The novel was published by Greywater Press and won the Tessary Prize for Fiction in 1935.",
    ]),
    ("Elin Marsk", [
        "Elin Marsk (1902-1977) was a novelist who wrote about mountain and coastal communities.",
        "She was born in the mining town of Karsk and studied literature at Brannock University.",
        "Her best-known novel, The Salt Orchard, appeared in 1934.",
        "She spent her later years in Tessary.",
    ]),
    ("The Copper Stair", [
        "The Copper Stair is a 1941 novel by Elin Marsk.",
        "It is set among copper miners in a mountain town.",
        "Unlike her earlier novels, it was published by Alder & Finch in Harrowmere.",
    ]),
    ("Tessary Prize for Fiction", [
        "The Tessary Prize for Fiction is a literary award given each year by the city of Tessary, Orvland.",
        "It was first awarded in 1921.",
        "Winners have included Elin Marsk and Sabine Orrel.",
    ]),
    ("Alder & Finch", [
        "Alder & Finch is a publishing house in Harrowmere, Kestria.",
        "It was founded in 1878 by the bookseller Jonas Alder and the printer Rufus Finch.",
        "Its list has included the poetry of Piers Dunmore and the crime novels of Nils Ambry.",
    ]),
    ("Jonas Alder", [
        "Jonas Alder (1840-1911) was a Kestrian bookseller and publisher.",
        "He was born in Brenn, and in 1878 he co-founded the publishing house Alder & Finch in Harrowmere.",
        "A year later he founded the newspaper the Harrowmere Gazette.",
    ]),
    ("Rufus Finch", [
        "Rufus Finch (1843-1920) was a Kestrian printer.",
        "He was born in Keswin and trained as a typesetter in Tessary.",
        "He co-founded Alder & Finch in 1878 and designed its finch emblem.",
    ]),
    ("Harrowmere Gazette", [
        "The Harrowmere Gazette is a daily newspaper published in Harrowmere, Kestria.",
        "It was founded in 1879 by Jonas Alder.",
        "It is the oldest daily newspaper in Kestria still in print.",
    ]),
    ("Lanterns on the Osk", [
        "Lanterns on the Osk is a 1921 collection of poems by Piers Dunmore.",
        "The poems describe the timber rafts that were once floated down the Osk River.",
        "It was published in Harrowmere by Alder & Finch.",
    ]),
    ("Piers Dunmore", [
        "Piers Dunmore (1888-1960) was an Orvlandish poet.",
        "He was born in Drusk, a fishing village on Lake Ammer, and worked as a ferryman before turning to poetry.",
        "His second collection, The Ferryman's Year, appeared in 1930.",
    ]),
    ("The Ferryman's Year", [
        "The Ferryman's Year is a 1930 collection of poems by Piers Dunmore.",
        "Its twelve poems follow a year in the life of a ferryman on Lake Ammer.",
        "It was published by Greywater Press.",
    ]),
    ("The Glass Ferry", [
        "The Glass Ferry is a 1958 novel by Sabine Orrel.",
        "Set on a ferry crossing the Bay of Sollis, it tells the story of a smuggler and a customs officer.",
        "It was published by Bayside Editions.",
    ]),
    ("Sabine Orrel", [
        "Sabine Orrel (1925-2011) was a novelist and playwright.",
        "She was born in Tamberford and worked as a schoolteacher before publishing her first novel.",
        "Her best-known work is The Glass Ferry.",
    ]),
    ("Bayside Editions", [
        "Bayside Editions is a publishing house in Port Vaudrin, Marenthe.",
        "It was founded in 1947 by Claude Amary.",
        "It publishes fiction and travel writing.",
    ]),
    ("Claude Amary", [
        "Claude Amary (1910-1985) was a Marenthian publisher and translator.",
        "He was born in Port Vaudrin and founded Bayside Editions in 1947.",
        "He was the uncle of the singer Jules Amary.",
    ]),
    ("Nils Ambry", [
        "Nils Ambry (1921-1990) was a Kestrian writer of crime novels.",
        "He was born in Keswin and worked as a police clerk before turning to fiction.",
        "His best-known book is Death at Brenn Lock.",
    ]),
    ("Death at Brenn Lock", [
        "Death at Brenn Lock is a 1967 crime novel by Nils Ambry.",
        "A lock keeper on the Vell is found dead, and a retired barge captain sets out to find the killer.",
        "It was published by Alder & Finch.",
    ]),
    ("Brenn Lock", [
        "Brenn Lock is a lock on the Vell River at Brenn, Kestria.",
        "It was built in 1784 to let barges pass the rapids below the confluence with the Serin.",
        "The lock was rebuilt in 1911.",
    ]),
    ("The Gray Stag", [
        "The Gray Stag is a 1952 novel by Ivo Parrish.",
        "It tells the story of a brewing family in a Vell valley town during the 1920s.",
        "It was published by Alder & Finch.",
    ]),
    ("Ivo Parrish", [
        "Ivo Parrish (1910-1982) was a Kestrian novelist.",
        "He was born in Drusk and worked as a journalist for the Harrowmere Gazette.",
        "His best-known novel is The Gray Stag.",
    ]),
    # --- Colleges, universities and schools --------------------------------
    ("Penmarrow College", [
        "Penmarrow College is the oldest institution of higher learning in Kestria.",
        "It was founded in 1612 by Aldo Penmarrow, bishop of Harrowmere.",
        "The college stands in Harrowmere, close to the old harbour.",
        "It is organised into five halls, the oldest of which still uses its original chapel.",
    ]),
    ("Aldo Penmarrow", [
        "Aldo Penmarrow (1561-1630) was a Kestrian churchman and scholar who became bishop of Harrowmere in 1604.",
        "He was born in Pellory, the son of a mine overseer.",
        "In 1612 he founded the college in Harrowmere that bears his name.",
    ]),
    ("Kellmarsh University", [
        "Kellmarsh University is a university in Tessary, Orvland.",
        "It was founded in 1540 by King Odo II and takes its name from the Kellmarsh quarter of the city.",
        "Its library holds one of the largest collections of medieval manuscripts in the region.",
    ]),
    ("Ardlow Institute of Technology", [
        "The Ardlow Institute of Technology is a public university in Ardlow, Kestria.",
        "It was founded in 1889 by the engineer Tobias Wrenfield to train railway and bridge engineers.",
        "The chemist Lena Varro taught there from 1931.",
    ]),
    ("Tobias Wrenfield", [
        "Tobias Wrenfield (1832-1901) was a Kestrian civil engineer.",
        "He was born in Keswin and studied mathematics at Penmarrow College.",
        "He designed the Serin Bridge at Brenn and in 1889 founded the Ardlow Institute of Technology.",
    ]),
    ("Brannock University", [
        "Brannock University is a public university in Ulmstead, Dalsgor.",
        "It was founded in 1921 and is named after the statesman Ivar Brannock.",
        "It is known for its schools of geology and literature.",
    ]),
    ("Ulmstead School of Mines", [
        "The Ulmstead School of Mines is a technical college in Ulmstead, Dalsgor, founded in 1868.",
        "It trains mining engineers and geologists.",
        "Its research institute was merged into Brannock University in 1962.",
    ]),
    ("Tessary Conservatory", [
        "The Tessary Conservatory is a music school in Tessary, Orvland.",
        "It was founded in 1855 by the composer Ilse Marrick.",
        "It is housed in a former royal riding school.",
    ]),
    ("Ilse Marrick", [
        "Ilse Marrick (1811-1879) was an Orvlandish composer and cellist.",
        "She was born in Oskbridge and studied music in Harrowmere.",
        "In 1855 she founded the Tessary Conservatory, where she taught the cello until 1875.",
    ]),
    ("Johanna Marrick", [
        "Johanna Marrick (1840-1901) was an Orvlandish violinist, the niece of Ilse Marrick.",
        "She was born in Tessary.",
        "She taught the violin at the Tessary Conservatory for thirty years.",
    ]),
    ("Carl Dorrice", [
        "Carl Dorrice (1851-1923) was a Kestrian civil engineer of Marenthian descent.",
        "He was born in Keswin and studied at Penmarrow College.",
        "He designed the Renwick Bridge in Harrowmere, completed in 1899.",
    ]),
    ("Ines Dorrice", [
        "Ines Dorrice (1848-1921) was a Marenthian sea captain, a granddaughter of the shipbuilder Lucan Dorrice.",
        "She was born in Port Vaudrin.",
        "She commanded the mail steamer Gray Heron for many years.",
    ]),
    ("Edda Renwick", [
        "Edda Renwick (1931-2010) was a Kestrian stage actress.",
        "She was born in Brenn.",
        "She was a great-niece of Ada Renwick.",
    ]),
    ("Tomas Brecken", [
        "Tomas Brecken (1940-2009) was a Kestrian record producer and sound engineer.",
        "He was born in Brenn.",
        "He produced the first three albums of The Lantern Thieves for Northline Records.",
    ]),
    ("Kai Rennick", [
        "Kai Rennick (born 1964) is an Orvlandish singer and guitarist who co-founded Hollow Meridian with his brother Otto.",
        "He was born in Vennick.",
        "He studied composition at the Tessary Conservatory.",
    ]),
    ("Anders Kray", [
        "Anders Kray (1838-1902) was a Dalsgorian surveyor and mountaineer, the father of the astronomer Anselm Kray.",
        "He was born in Karsk.",
        "In 1871 he led the first ascent of Mount Hesk.",
    ]),
    # --- Science -----------------------------------------------------------
    ("Lena Varro", [
        "Lena Varro (1899-1984) was an Orvlandish chemist and mineralogist.",
        "She was born in Vennick and studied chemistry at Kellmarsh University.",
        "From 1931 she taught at the Ardlow Institute of Technology in Kestria, and in 1936 she described the mineral varronite.",
    ]),
    ("Varronite", [
        "Varronite is a rare lead mineral first described in 1936 from the mines of Pellory in Kestria.",
        "It is named after the chemist Lena Varro.",
        "It forms small blue-green crystals.",
    ]),
    ("Pellory Mining Company", [
        "The Pellory Mining Company worked the lead and silver mines of Pellory in the Korrin Hills from 1847 until 1961.",
        "At its peak it employed over two thousand miners.",
        "Its former offices now house a mining museum.",
    ]),
    ("Vennick Glassworks", [
        "Vennick Glassworks is a glass factory in Vennick, Orvland, founded in 1714.",
        "It is the oldest working glassworks in Orvland.",
        "It is known for its blue tableware.",
    ]),
    ("Mount Aldry Observatory", [
        "The Mount Aldry Observatory is an astronomical observatory on the summit of Mount Aldry in Kestria.",
        "It opened in 1908, and its first director was the astronomer Anselm Kray, who led it until 1935.",
        "Its main telescope, a 90-centimetre reflector, was installed in 1926.",
    ]),
    ("Anselm Kray", [
        "Anselm Kray (1870-1944) was a Dalsgorian astronomer.",
        "He was born in Ulmstead and studied at Kellmarsh University in Tessary.",
        "He was the first director of the Mount Aldry Observatory, where he catalogued more than four thousand variable stars.",
    ]),
    ("Ulmstead Observatory", [
        "The Ulmstead Observatory is an astronomical observatory in Ulmstead, Dalsgor, opened in 1890.",
        "From 1921 to 1950 it was directed by Berit Kray, a niece of Anselm Kray.",
        "It is now part of Brannock University.",
    ]),
    ("Berit Kray", [
        "Berit Kray (1889-1967) was a Dalsgorian astronomer.",
        "She was born in Drossel, the niece of the astronomer Anselm Kray.",
        "She directed the Ulmstead Observatory from 1921 to 1950.",
    ]),
    # --- Engineering and railways ------------------------------------------
    ("Serin Bridge", [
        "The Serin Bridge is a wrought-iron bridge over the Serin River at Brenn, Kestria.",
        "It was designed by Tobias Wrenfield and completed in 1874.",
        "The bridge carries the main road from Brenn towards the Korrin Hills.",
    ]),
    ("Vell Viaduct", [
        "The Vell Viaduct is a stone railway viaduct over the Vell near Ardlow, Kestria.",
        "It was designed by Hugo Marsh for the Kestrian Northern Railway and completed in 1858.",
        "It has nineteen arches.",
    ]),
    ("Hugo Marsh", [
        "Hugo Marsh (1815-1880) was a Kestrian railway engineer.",
        "He was born in Ardlow and was chief engineer of the Kestrian Northern Railway from 1856.",
        "His best-known work is the Vell Viaduct.",
    ]),
    ("Kestrian Northern Railway", [
        "The Kestrian Northern Railway was a railway company founded in 1856 to link Harrowmere with the Vell valley.",
        "Its line reached Ardlow in 1858 and Drusk in 1863.",
        "It became part of the state railways in 1921.",
    ]),
    ("Osk Valley Railway", [
        "The Osk Valley Railway is a railway line in Orvland that runs from Tessary up the valley of the Osk to Ruddow.",
        "It opened in 1872.",
        "Ruddow became a junction in 1879, when a branch to the Dalsgor border was built.",
    ]),
    # --- Music -------------------------------------------------------------
    ("The Lantern Thieves", [
        "The Lantern Thieves were a Kestrian folk-rock band formed in Ardlow in 1974.",
        "The band was fronted by the singer Mira Solend.",
        "They signed with Northline Records in 1975, and their debut album, Vell Water, followed a year later.",
        "The band split up in 1988.",
    ]),
    ("Vell Water", [
        "Vell Water is the debut album of the Kestrian band The Lantern Thieves, released in 1976.",
        "It was recorded in Harrowmere and produced by Tomas Brecken.",
        "Its title track is a ballad about the spring floods of the Vell valley.",
    ]),
    ("Stone and Willow", [
        "Stone and Willow is the second album of The Lantern Thieves, released in 1979.",
        "It was recorded in the town of Harl.",
        "It includes the band's only top-ten single, Ferry Lights.",
    ]),
    ("Mira Solend", [
        "Mira Solend (born 1953) is a Kestrian singer and songwriter.",
        "She was born in Harl and began singing in church choirs.",
        "She was the lead singer of The Lantern Thieves and has released six solo albums since 1990.",
    ]),
    ("Northline Records", [
        "Northline Records is an independent record label based in Harrowmere, Kestria.",
        "It was founded in 1971 by the producer Gwen Tallow.",
        "Its first major signing was the folk-rock band The Lantern Thieves, and it later signed Drusk Parade.",
    ]),
    ("Gwen Tallow", [
        "Gwen Tallow (born 1945) is a Kestrian record producer.",
        "She was born in Keswin and is a granddaughter of the brewer Oskar Tallow.",
        "In 1971 she founded Northline Records in Harrowmere.",
    ]),
    ("Drusk Parade", [
        "Drusk Parade was a Kestrian rock band formed in Harrowmere in 1979.",
        "The band took its name from a street in Ardlow, not from the town of Drusk.",
        "It signed with Northline Records in 1980 and released four albums.",
    ]),
    ("Copper Finch", [
        "Copper Finch is a Marenthian rock band formed in Port Vaudrin in 1965.",
        "Its frontman was the singer Jules Amary until his death in 1999.",
        "The band signed with Cinder Records in 1966 and had its first hit with the single Tin Harbour.",
    ]),
    ("Cinder Records", [
        "Cinder Records is a record label based in Port Vaudrin, Marenthe.",
        "It was founded in 1962 by the producer Remy Castell.",
        "The label is best known for the rock bands it signed in the 1960s.",
    ]),
    ("Remy Castell", [
        "Remy Castell (1931-2004) was a Marenthian record producer.",
        "He was born in Ebbmouth and worked as a radio engineer in Port Vaudrin before starting his own label.",
        "In 1962 he founded Cinder Records.",
    ]),
    ("Jules Amary", [
        "Jules Amary (1942-1999) was a Marenthian singer, best known as the frontman of Copper Finch.",
        "He was born in Corvaine and moved to Port Vaudrin as a teenager.",
        "He also recorded two solo albums.",
    ]),
    ("Tin Harbour", [
        "Tin Harbour is a 1967 single by the Marenthian band Copper Finch.",
        "It was written by Jules Amary about the fishing port of Ebbmouth.",
        "The song reached number one in Marenthe.",
    ]),
    ("Hollow Meridian", [
        "Hollow Meridian is an Orvlandish band formed in Tessary in 1988 by the brothers Kai and Otto Rennick.",
        "The members of the band met while studying at the Tessary Conservatory.",
        "Its music mixes folk melodies with electronic sounds, and its debut album, Glass Weather, appeared in 1991.",
    ]),
    ("Otto Rennick", [
        "Otto Rennick (born 1966) is an Orvlandish keyboard player and composer, a co-founder of Hollow Meridian.",
        "He was born in Vennick.",
        "He has written music for several Orvlandish films.",
    ]),
    ("Ammer Sound", [
        "Ammer Sound is a record label in Tessary, Orvland, founded in 1984.",
        "It signed Hollow Meridian in 1990.",
        "The label specialises in electronic and folk music.",
    ]),
    ("Glass Weather", [
        "Glass Weather is the 1991 debut album of the Orvlandish band Hollow Meridian.",
        "It was released by Ammer Sound.",
        "The album was recorded in a disused glassworks in Vennick.",
    ]),
    # --- Sport -------------------------------------------------------------
    ("FC Drusk", [
        "FC Drusk is a football club based in Drusk, Kestria.",
        "Founded in 1899, it plays its home matches at the Wool Market Ground.",
        "The club won the Kestrian Cup in 1934 and 1961.",
    ]),
    ("Wool Market Ground", [
        "The Wool Market Ground is a football stadium in Drusk, Kestria.",
        "It was built in 1905 on the site of the old sheep pens of the wool market.",
        "It holds about 6,000 spectators.",
    ]),
    ("Ardlow Rovers", [
        "Ardlow Rovers is a football club based in Ardlow, Kestria, founded in 1887.",
        "Since 1923 the club has played its home matches at Corvel Park.",
        "It was a founding member of the Kestrian League.",
    ]),
    ("Corvel Park", [
        "Corvel Park is a football stadium in Ardlow, Kestria, opened in 1923.",
        "It is named after the brewer Ana Corvel, who gave the land on which it stands.",
        "The stadium holds about 14,000 spectators.",
    ]),
    ("Kestrian Cup", [
        "The Kestrian Cup is the main knockout football competition in Kestria.",
        "It was first held in 1896.",
        "Ardlow Rovers have won it a record eleven times.",
    ]),
    ("Kestrian League", [
        "The Kestrian League is the top football league of Kestria, founded in 1895.",
        "Its founding members included Ardlow Rovers and Keswin Mariners FC.",
        "FC Drusk joined it in 1920.",
    ]),
    ("Keswin Mariners FC", [
        "Keswin Mariners FC is a football club based in Keswin, Kestria, founded in 1893.",
        "Its home ground is the Ropewalk, built on the site of a former rope works.",
        "The club was founded by workers of Velsing Shipyards.",
    ]),
    ("SC Tessary", [
        "SC Tessary is a football club based in Tessary, Orvland, founded in 1902.",
        "It plays at Lakeside Stadium on the shore of Lake Ammer.",
        "It has won the Orvlandish championship nine times.",
    ]),
    # --- Buildings, festivals and other places -----------------------------
    ("St. Benna's Cathedral", [
        "St. Benna's Cathedral is the cathedral of Ardlow, Kestria.",
        "It was completed in 1402 after nearly a century of building.",
        "Its bell tower is the tallest medieval structure in the Vell valley.",
    ]),
    ("Tessary Opera House", [
        "The Tessary Opera House is an opera house on the lakefront of Tessary, Orvland.",
        "It opened in 1964 and was designed by the Kestrian architect Eira Velsing.",
        "Its main hall seats 1,800.",
    ]),
    ("Ammer Lantern Festival", [
        "The Ammer Lantern Festival is held every autumn in Tessary, Orvland.",
        "On its final night thousands of paper lanterns are floated on Lake Ammer.",
        "The festival is said to date from the early seventeenth century.",
    ]),
    ("Harl Ferry", [
        "The Harl Ferry is a cable ferry across the Serin River between Harl in Kestria and Harlow in Orvland.",
        "It has operated since 1821.",
        "It carries foot passengers and bicycles.",
    ]),
    ("Harrowmere Harbour Fort", [
        "Harrowmere Harbour Fort is a sixteenth-century fortress guarding the harbour of Harrowmere, Kestria.",
        "It was built between 1541 and 1553.",
        "It now houses the Kestrian army museum.",
    ]),
    ("Ardlow Railway Museum", [
        "The Ardlow Railway Museum is a museum in Ardlow, Kestria, housed in the former engine sheds of the Kestrian Northern Railway.",
        "It opened in 1968.",
        "Its collection includes the locomotive Vell Queen, built in 1857.",
    ]),
    ("Lorn Mill", [
        "Lorn Mill is a former paper mill in Halvers, Orvland, built in 1788.",
        "It was owned by the Lorn family until 1931.",
        "It now houses a museum of paper making.",
    ]),
    ("Lakeside Stadium", [
        "Lakeside Stadium is a football stadium in Tessary, Orvland, on the shore of Lake Ammer.",
        "Opened in 1927, it is the home ground of SC Tessary.",
        "It holds about 22,000 spectators.",
    ]),
    ("Serin Gold", [
        "Serin Gold is a pale lager first brewed by Brenn Brewery in 1903.",
        "After the brewery closed in 1979, the brand was bought by the Saltmoor Brewing Company.",
        "It is named after the Serin River.",
    ]),
    ("Tamberford Bridge", [
        "The Tamberford Bridge is a seven-arch stone bridge over the Tamber River at Tamberford, Marenthe.",
        "It was completed in 1702 and replaced the old ford.",
        "It was paid for by the town's cattle dealers.",
    ]),
    ("Ammer Steamship Company", [
        "The Ammer Steamship Company operates the passenger steamers on Lake Ammer in Orvland.",
        "It was founded in 1867, when it put the Queen Sigrun into service.",
        "Its head office is in Tessary.",
    ]),
    ("Marsk Prize", [
        "The Marsk Prize is a Dalsgorian literary award established in 1980 in memory of the novelist Elin Marsk.",
        "It is awarded by Brannock University.",
        "Its first winner was the poet Ilka Dunmore.",
    ]),
    ("Corvaine Cider Fair", [
        "The Corvaine Cider Fair is held each October in Corvaine, Marenthe.",
        "Growers from the Ebbren valley compete for the Golden Press trophy.",
        "The fair was first recorded in 1732.",
    ]),
]

# ---------------------------------------------------------------------------
# Questions. Each hop is (passage title, head, relation, tail, sub-question);
# the sub-answer is the tail. Bridge questions name only the first entity.
# ---------------------------------------------------------------------------

VELL = ["Vell", "the Vell", "Vell River"]

QUESTIONS: list[dict] = [
    # ===== 2 hops ==========================================================
    dict(q="In which town was the founder of Ostrel Brewing born?", a=["Drusk"], hops=[
        ("Ostrel Brewing", "Ostrel Brewing", "founded by", "Ana Corvel", "Who founded Ostrel Brewing?"),
        ("Ana Corvel", "Ana Corvel", "place of birth", "Drusk", "Where was #1 born?"),
    ]),
    dict(q="Who founded the college where Tobias Wrenfield studied?", a=["Aldo Penmarrow", "Penmarrow"], hops=[
        ("Tobias Wrenfield", "Tobias Wrenfield", "educated at", "Penmarrow College", "Where did Tobias Wrenfield study?"),
        ("Penmarrow College", "Penmarrow College", "founded by", "Aldo Penmarrow", "Who founded #1?"),
    ]),
    dict(q="In what year was the publisher of The Salt Orchard founded?", a=["1903", "in 1903"], hops=[
        ("The Salt Orchard", "The Salt Orchard", "publisher", "Greywater Press", "Who published The Salt Orchard?"),
        ("Greywater Press", "Greywater Press", "inception", "1903", "When was #1 founded?"),
    ]),
    dict(q="Which record label signed the band whose lead singer was Mira Solend?", a=["Northline Records", "Northline"], hops=[
        ("Mira Solend", "Mira Solend", "member of", "The Lantern Thieves", "Which band was Mira Solend the lead singer of?"),
        ("The Lantern Thieves", "The Lantern Thieves", "record label", "Northline Records", "Which record label signed #1?"),
    ]),
    dict(q="Who founded the record label that signed Copper Finch?", a=["Remy Castell", "Castell"], hops=[
        ("Copper Finch", "Copper Finch", "record label", "Cinder Records", "Which record label signed Copper Finch?"),
        ("Cinder Records", "Cinder Records", "founded by", "Remy Castell", "Who founded #1?"),
    ]),
    dict(q="In what year was the shipyard that built the Aldry Star founded?", a=["1851", "in 1851"], hops=[
        ("Aldry Star", "Aldry Star", "manufacturer", "Velsing Shipyards", "Which shipyard built the Aldry Star?"),
        ("Velsing Shipyards", "Velsing Shipyards", "inception", "1851", "When was #1 founded?"),
    ]),
    dict(q="What is the capital of the country in which Karsk lies?", a=["Ulmstead"], hops=[
        ("Karsk", "Karsk", "country", "Dalsgor", "In which country is Karsk?"),
        ("Dalsgor", "Dalsgor", "capital", "Ulmstead", "What is the capital of #1?"),
    ]),
    dict(q="Into which lake does the river that flows through Vennick empty?", a=["Lake Ammer", "Ammer"], hops=[
        ("Vennick", "Vennick", "located on river", "Osk", "Which river flows through Vennick?"),
        ("Osk River", "Osk", "flows into", "Lake Ammer", "Into which lake does #1 flow?"),
    ]),
    dict(q="In what year was the founder of the Ardlow Institute of Technology born?", a=["1832", "in 1832"], hops=[
        ("Ardlow Institute of Technology", "Ardlow Institute of Technology", "founded by", "Tobias Wrenfield",
         "Who founded the Ardlow Institute of Technology?"),
        ("Tobias Wrenfield", "Tobias Wrenfield", "date of birth", "1832", "When was #1 born?"),
    ]),
    dict(q="Where was the author of Lanterns on the Osk born?", a=["Drusk"], hops=[
        ("Lanterns on the Osk", "Lanterns on the Osk", "author", "Piers Dunmore", "Who wrote Lanterns on the Osk?"),
        ("Piers Dunmore", "Piers Dunmore", "place of birth", "Drusk", "Where was #1 born?"),
    ]),
    dict(q="In which town was the commander of the Stormwren born?", a=["Sollis"], hops=[
        ("Stormwren", "Stormwren", "commander", "Halvard Dune", "Who commanded the Stormwren?"),
        ("Halvard Dune", "Halvard Dune", "place of birth", "Sollis", "Where was #1 born?"),
    ]),
    dict(q="Which college did the first President of Kestria attend?", a=["Penmarrow College", "Penmarrow"], hops=[
        ("Kestria", "Kestria", "first president", "Ada Renwick", "Who was the first President of Kestria?"),
        ("Ada Renwick", "Ada Renwick", "educated at", "Penmarrow College", "Which college did #1 attend?"),
    ]),
    dict(q="On which river lies the birthplace of Lena Varro?", a=["Osk", "the Osk", "Osk River"], hops=[
        ("Lena Varro", "Lena Varro", "place of birth", "Vennick", "Where was Lena Varro born?"),
        ("Vennick", "Vennick", "located on river", "Osk", "On which river lies #1?"),
    ]),
    dict(q="In which mountain range does the river that flows through Ulmstead rise?", a=["Ulm Range", "the Ulm Range"], hops=[
        ("Ulmstead", "Ulmstead", "located on river", "Caddow", "Which river flows through Ulmstead?"),
        ("Caddow River", "Caddow", "source in", "Ulm Range", "In which mountain range does #1 rise?"),
    ]),
    dict(q="Which instrument did the founder of the Tessary Conservatory teach there?", a=["cello", "the cello"], hops=[
        ("Tessary Conservatory", "Tessary Conservatory", "founded by", "Ilse Marrick", "Who founded the Tessary Conservatory?"),
        ("Ilse Marrick", "Ilse Marrick", "instrument", "cello", "Which instrument did #1 teach?"),
    ]),
    dict(q="Which company was founded by the grandmother of Johan Velsing?", a=["Velsing Shipyards"], hops=[
        ("Johan Velsing", "Johan Velsing", "grandmother", "Marta Velsing", "Who was the grandmother of Johan Velsing?"),
        ("Marta Velsing", "Marta Velsing", "founded", "Velsing Shipyards", "Which company did #1 found?"),
    ]),
    dict(q="Who was the lead singer of the band that recorded the album Vell Water?", a=["Mira Solend", "Solend"], hops=[
        ("Vell Water", "Vell Water", "performer", "The Lantern Thieves", "Which band recorded Vell Water?"),
        ("The Lantern Thieves", "The Lantern Thieves", "lead singer", "Mira Solend", "Who was the lead singer of #1?"),
    ]),
    dict(q="In what year did the observatory led by Anselm Kray open?", a=["1908", "in 1908"], hops=[
        ("Anselm Kray", "Anselm Kray", "director of", "Mount Aldry Observatory", "Which observatory did Anselm Kray lead?"),
        ("Mount Aldry Observatory", "Mount Aldry Observatory", "inception", "1908", "When did #1 open?"),
    ]),
    dict(q="At which town does the river that drains Lake Ammer join the Vell?", a=["Brenn"], hops=[
        ("Lake Ammer", "Lake Ammer", "drained by", "Serin", "Which river drains Lake Ammer?"),
        ("Serin River", "Serin", "joins the Vell at", "Brenn", "At which town does #1 join the Vell?"),
    ]),
    dict(q="In what year was the university where Elin Marsk studied founded?", a=["1921", "in 1921"], hops=[
        ("Elin Marsk", "Elin Marsk", "educated at", "Brannock University", "Where did Elin Marsk study?"),
        ("Brannock University", "Brannock University", "inception", "1921", "When was #1 founded?"),
    ]),
    dict(q="Which brewery was founded by the grandfather of Gwen Tallow?", a=["Brenn Brewery"], hops=[
        ("Gwen Tallow", "Gwen Tallow", "grandfather", "Oskar Tallow", "Who was the grandfather of Gwen Tallow?"),
        ("Oskar Tallow", "Oskar Tallow", "founded", "Brenn Brewery", "Which brewery did #1 found?"),
    ]),
    dict(q="On which river lies the birthplace of Ada Renwick?", a=VELL, hops=[
        ("Ada Renwick", "Ada Renwick", "place of birth", "Ardlow", "Where was Ada Renwick born?"),
        ("Ardlow", "Ardlow", "located on river", "Vell", "On which river lies #1?"),
    ]),
    # ===== 3 hops ==========================================================
    dict(q="In which river valley lies the birthplace of the founder of Ostrel Brewing?",
         a=["Vell valley", "the Vell valley", "Vell", "the Vell"], hops=[
        ("Ostrel Brewing", "Ostrel Brewing", "founded by", "Ana Corvel", "Who founded Ostrel Brewing?"),
        ("Ana Corvel", "Ana Corvel", "place of birth", "Drusk", "Where was #1 born?"),
        ("Drusk", "Drusk", "located in", "Vell valley", "In which river valley lies #2?"),
    ]),
    dict(q="What is the home ground of the football club based in Ana Corvel's birthplace?", a=["Wool Market Ground", "the Wool Market Ground"], hops=[
        ("Ana Corvel", "Ana Corvel", "place of birth", "Drusk", "Where was Ana Corvel born?"),
        ("Drusk", "Drusk", "home of", "FC Drusk", "Which football club is based in #1?"),
        ("FC Drusk", "FC Drusk", "home ground", "Wool Market Ground", "What is the home ground of #2?"),
    ]),
    dict(q="Into which lake does the river that flows through Lena Varro's birthplace empty?", a=["Lake Ammer", "Ammer"], hops=[
        ("Lena Varro", "Lena Varro", "place of birth", "Vennick", "Where was Lena Varro born?"),
        ("Vennick", "Vennick", "located on river", "Osk", "Which river flows through #1?"),
        ("Osk River", "Osk", "flows into", "Lake Ammer", "Into which lake does #2 flow?"),
    ]),
    dict(q="Where was the founder of the publisher of The Salt Orchard born?", a=["Halvers"], hops=[
        ("The Salt Orchard", "The Salt Orchard", "publisher", "Greywater Press", "Who published The Salt Orchard?"),
        ("Greywater Press", "Greywater Press", "founded by", "Hedda Lorn", "Who founded #1?"),
        ("Hedda Lorn", "Hedda Lorn", "place of birth", "Halvers", "Where was #2 born?"),
    ]),
    dict(q="In which country is the birthplace of the author of The Glass Ferry?", a=["Marenthe"], hops=[
        ("The Glass Ferry", "The Glass Ferry", "author", "Sabine Orrel", "Who wrote The Glass Ferry?"),
        ("Sabine Orrel", "Sabine Orrel", "place of birth", "Tamberford", "Where was #1 born?"),
        ("Tamberford", "Tamberford", "country", "Marenthe", "In which country is #2?"),
    ]),
    dict(q="Where was the founder of the record label that signed Copper Finch born?", a=["Ebbmouth"], hops=[
        ("Copper Finch", "Copper Finch", "record label", "Cinder Records", "Which record label signed Copper Finch?"),
        ("Cinder Records", "Cinder Records", "founded by", "Remy Castell", "Who founded #1?"),
        ("Remy Castell", "Remy Castell", "place of birth", "Ebbmouth", "Where was #2 born?"),
    ]),
    dict(q="In which city is the college where the founder of the Ardlow Institute of Technology studied?", a=["Harrowmere"], hops=[
        ("Ardlow Institute of Technology", "Ardlow Institute of Technology", "founded by", "Tobias Wrenfield",
         "Who founded the Ardlow Institute of Technology?"),
        ("Tobias Wrenfield", "Tobias Wrenfield", "educated at", "Penmarrow College", "Where did #1 study?"),
        ("Penmarrow College", "Penmarrow College", "located in", "Harrowmere", "In which city is #2?"),
    ]),
    dict(q="Who founded the shipyard that built the ship commanded by Bram Okonny?", a=["Marta Velsing"], hops=[
        ("Bram Okonny", "Bram Okonny", "commanded", "Aldry Star", "Which ship did Bram Okonny command?"),
        ("Aldry Star", "Aldry Star", "manufacturer", "Velsing Shipyards", "Which shipyard built #1?"),
        ("Velsing Shipyards", "Velsing Shipyards", "founded by", "Marta Velsing", "Who founded #2?"),
    ]),
    dict(q="Where was the lead singer of the band that recorded Vell Water born?", a=["Harl"], hops=[
        ("Vell Water", "Vell Water", "performer", "The Lantern Thieves", "Which band recorded Vell Water?"),
        ("The Lantern Thieves", "The Lantern Thieves", "lead singer", "Mira Solend", "Who was the lead singer of #1?"),
        ("Mira Solend", "Mira Solend", "place of birth", "Harl", "Where was #2 born?"),
    ]),
    dict(q="In what year was the college attended by the first President of Kestria founded?", a=["1612", "in 1612"], hops=[
        ("Kestria", "Kestria", "first president", "Ada Renwick", "Who was the first President of Kestria?"),
        ("Ada Renwick", "Ada Renwick", "educated at", "Penmarrow College", "Which college did #1 attend?"),
        ("Penmarrow College", "Penmarrow College", "inception", "1612", "When was #2 founded?"),
    ]),
    dict(q="In which country was the commander of the Stormwren born?", a=["Marenthe"], hops=[
        ("Stormwren", "Stormwren", "commander", "Halvard Dune", "Who commanded the Stormwren?"),
        ("Halvard Dune", "Halvard Dune", "place of birth", "Sollis", "Where was #1 born?"),
        ("Sollis", "Sollis", "country", "Marenthe", "In which country is #2?"),
    ]),
    dict(q="Where was the grandmother of the founder of the Velsing Maritime Museum born?", a=["Brenn"], hops=[
        ("Velsing Maritime Museum", "Velsing Maritime Museum", "founded by", "Johan Velsing", "Who founded the Velsing Maritime Museum?"),
        ("Johan Velsing", "Johan Velsing", "grandmother", "Marta Velsing", "Who was the grandmother of #1?"),
        ("Marta Velsing", "Marta Velsing", "place of birth", "Brenn", "Where was #2 born?"),
    ]),
    dict(q="Who founded the oldest university in the capital of Orvland?", a=["King Odo II", "Odo II"], hops=[
        ("Orvland", "Orvland", "capital", "Tessary", "What is the capital of Orvland?"),
        ("Tessary", "Tessary", "oldest university", "Kellmarsh University", "What is the oldest university in #1?"),
        ("Kellmarsh University", "Kellmarsh University", "founded by", "King Odo II", "Who founded #2?"),
    ]),
    dict(q="Which instrument did the founder of the conservatory where the members of Hollow Meridian met teach?", a=["cello", "the cello"], hops=[
        ("Hollow Meridian", "Hollow Meridian", "members studied at", "Tessary Conservatory",
         "At which conservatory did the members of Hollow Meridian meet?"),
        ("Tessary Conservatory", "Tessary Conservatory", "founded by", "Ilse Marrick", "Who founded #1?"),
        ("Ilse Marrick", "Ilse Marrick", "instrument", "cello", "Which instrument did #2 teach?"),
    ]),
    dict(q="In which range of hills lies the birthplace of the founder of Brenn Brewery?", a=["Korrin Hills", "the Korrin Hills"], hops=[
        ("Brenn Brewery", "Brenn Brewery", "founded by", "Oskar Tallow", "Who founded Brenn Brewery?"),
        ("Oskar Tallow", "Oskar Tallow", "place of birth", "Pellory", "Where was #1 born?"),
        ("Pellory", "Pellory", "located in", "Korrin Hills", "In which range of hills lies #2?"),
    ]),
    dict(q="What was the debut album of the first major band signed by the label that Gwen Tallow founded?", a=["Vell Water"], hops=[
        ("Gwen Tallow", "Gwen Tallow", "founded", "Northline Records", "Which record label did Gwen Tallow found?"),
        ("Northline Records", "Northline Records", "first major signing", "The Lantern Thieves", "What was the first major band signed by #1?"),
        ("The Lantern Thieves", "The Lantern Thieves", "debut album", "Vell Water", "What was the debut album of #2?"),
    ]),
    dict(q="In what year was the bridge designed by the founder of the Ardlow Institute of Technology completed?", a=["1874", "in 1874"], hops=[
        ("Ardlow Institute of Technology", "Ardlow Institute of Technology", "founded by", "Tobias Wrenfield",
         "Who founded the Ardlow Institute of Technology?"),
        ("Tobias Wrenfield", "Tobias Wrenfield", "designed", "Serin Bridge", "Which bridge did #1 design?"),
        ("Serin Bridge", "Serin Bridge", "completed", "1874", "When was #2 completed?"),
    ]),
    dict(q="Which river is joined by the river that drains the lake fed by the Osk?", a=VELL, hops=[
        ("Osk River", "Osk", "flows into", "Lake Ammer", "Into which lake does the Osk flow?"),
        ("Lake Ammer", "Lake Ammer", "drained by", "Serin", "Which river drains #1?"),
        ("Serin River", "Serin", "joins", "Vell", "Which river does #2 join?"),
    ]),
    dict(q="In what year was the record label of the band that recorded Vell Water founded?", a=["1971", "in 1971"], hops=[
        ("Vell Water", "Vell Water", "performer", "The Lantern Thieves", "Which band recorded Vell Water?"),
        ("The Lantern Thieves", "The Lantern Thieves", "record label", "Northline Records", "Which record label signed #1?"),
        ("Northline Records", "Northline Records", "inception", "1971", "When was #2 founded?"),
    ]),
    dict(q="Where was the founder of the shipyard that built the paddle steamer Queen Sigrun born?", a=["Corvaine"], hops=[
        ("Queen Sigrun (ship)", "Queen Sigrun", "manufacturer", "Tamber Yards", "Which shipyard built the paddle steamer Queen Sigrun?"),
        ("Tamber Yards", "Tamber Yards", "founded by", "Lucan Dorrice", "Who founded #1?"),
        ("Lucan Dorrice", "Lucan Dorrice", "place of birth", "Corvaine", "Where was #2 born?"),
    ]),
    dict(q="In which range of hills stands the mountain on which Anselm Kray's observatory is located?",
         a=["Korrin Hills", "the Korrin Hills"], hops=[
        ("Anselm Kray", "Anselm Kray", "director of", "Mount Aldry Observatory", "Which observatory did Anselm Kray direct?"),
        ("Mount Aldry Observatory", "Mount Aldry Observatory", "located on", "Mount Aldry", "On which mountain is #1?"),
        ("Mount Aldry", "Mount Aldry", "part of", "Korrin Hills", "In which range of hills is #2?"),
    ]),
    dict(q="Which company was founded by the woman after whom the home ground of Ardlow Rovers is named?", a=["Ostrel Brewing"], hops=[
        ("Ardlow Rovers", "Ardlow Rovers", "home ground", "Corvel Park", "What is the home ground of Ardlow Rovers?"),
        ("Corvel Park", "Corvel Park", "named after", "Ana Corvel", "After whom is #1 named?"),
        ("Ana Corvel", "Ana Corvel", "founded", "Ostrel Brewing", "Which company did #2 found?"),
    ]),
    dict(q="On which river lies the capital of the country in which Karsk is located?", a=["Caddow", "the Caddow", "Caddow River"], hops=[
        ("Karsk", "Karsk", "country", "Dalsgor", "In which country is Karsk?"),
        ("Dalsgor", "Dalsgor", "capital", "Ulmstead", "What is the capital of #1?"),
        ("Ulmstead", "Ulmstead", "located on river", "Caddow", "On which river lies #2?"),
    ]),
    # ===== 4 hops ==========================================================
    dict(q="Into which sea flows the river whose valley contains the birthplace of the founder of Ostrel Brewing?",
         a=["Grisel Sea", "the Grisel Sea"], hops=[
        ("Ostrel Brewing", "Ostrel Brewing", "founded by", "Ana Corvel", "Who founded Ostrel Brewing?"),
        ("Ana Corvel", "Ana Corvel", "place of birth", "Drusk", "Where was #1 born?"),
        ("Drusk", "Drusk", "located in", "Vell valley", "In which river valley lies #2?"),
        ("Vell River", "Vell", "flows into", "Grisel Sea", "Into which sea does the river of #3 flow?"),
    ]),
    dict(q="What is the capital of the country where the author of The Salt Orchard was born?", a=["Ulmstead"], hops=[
        ("The Salt Orchard", "The Salt Orchard", "author", "Elin Marsk", "Who wrote The Salt Orchard?"),
        ("Elin Marsk", "Elin Marsk", "place of birth", "Karsk", "Where was #1 born?"),
        ("Karsk", "Karsk", "country", "Dalsgor", "In which country is #2?"),
        ("Dalsgor", "Dalsgor", "capital", "Ulmstead", "What is the capital of #3?"),
    ]),
    dict(q="On which river lies the birthplace of the lead singer of the band that recorded Vell Water?",
         a=["Serin", "the Serin", "Serin River"], hops=[
        ("Vell Water", "Vell Water", "performer", "The Lantern Thieves", "Which band recorded Vell Water?"),
        ("The Lantern Thieves", "The Lantern Thieves", "lead singer", "Mira Solend", "Who was the lead singer of #1?"),
        ("Mira Solend", "Mira Solend", "place of birth", "Harl", "Where was #2 born?"),
        ("Harl", "Harl", "located on river", "Serin", "On which river lies #3?"),
    ]),
    dict(q="At the mouth of which river lies the birthplace of the founder of the record label that signed Copper Finch?",
         a=["Ebbren", "the Ebbren", "Ebbren River"], hops=[
        ("Copper Finch", "Copper Finch", "record label", "Cinder Records", "Which record label signed Copper Finch?"),
        ("Cinder Records", "Cinder Records", "founded by", "Remy Castell", "Who founded #1?"),
        ("Remy Castell", "Remy Castell", "place of birth", "Ebbmouth", "Where was #2 born?"),
        ("Ebbmouth", "Ebbmouth", "located at the mouth of", "Ebbren", "At the mouth of which river lies #3?"),
    ]),
    dict(q="Where was the founder of the shipyard that built the ship commanded by Bram Okonny born?", a=["Brenn"], hops=[
        ("Bram Okonny", "Bram Okonny", "commanded", "Aldry Star", "Which ship did Bram Okonny command?"),
        ("Aldry Star", "Aldry Star", "manufacturer", "Velsing Shipyards", "Which shipyard built #1?"),
        ("Velsing Shipyards", "Velsing Shipyards", "founded by", "Marta Velsing", "Who founded #2?"),
        ("Marta Velsing", "Marta Velsing", "place of birth", "Brenn", "Where was #3 born?"),
    ]),
    dict(q="On which river lies the birthplace of the founder of the conservatory where the members of Hollow Meridian met?",
         a=["Osk", "the Osk", "Osk River"], hops=[
        ("Hollow Meridian", "Hollow Meridian", "members studied at", "Tessary Conservatory",
         "At which conservatory did the members of Hollow Meridian meet?"),
        ("Tessary Conservatory", "Tessary Conservatory", "founded by", "Ilse Marrick", "Who founded #1?"),
        ("Ilse Marrick", "Ilse Marrick", "place of birth", "Oskbridge", "Where was #2 born?"),
        ("Oskbridge", "Oskbridge", "located on river", "Osk", "On which river lies #3?"),
    ]),
    dict(q="In which town was the founder of the college attended by the first President of Kestria born?", a=["Pellory"], hops=[
        ("Kestria", "Kestria", "first president", "Ada Renwick", "Who was the first President of Kestria?"),
        ("Ada Renwick", "Ada Renwick", "educated at", "Penmarrow College", "Which college did #1 attend?"),
        ("Penmarrow College", "Penmarrow College", "founded by", "Aldo Penmarrow", "Who founded #2?"),
        ("Aldo Penmarrow", "Aldo Penmarrow", "place of birth", "Pellory", "Where was #3 born?"),
    ]),
    dict(q="Which river drains the lake into which the river flowing through Lena Varro's birthplace empties?",
         a=["Serin", "the Serin", "Serin River"], hops=[
        ("Lena Varro", "Lena Varro", "place of birth", "Vennick", "Where was Lena Varro born?"),
        ("Vennick", "Vennick", "located on river", "Osk", "Which river flows through #1?"),
        ("Osk River", "Osk", "flows into", "Lake Ammer", "Into which lake does #2 flow?"),
        ("Lake Ammer", "Lake Ammer", "drained by", "Serin", "Which river drains #3?"),
    ]),
    dict(q="In which province is the birthplace of the grandmother of the founder of the Velsing Maritime Museum?", a=["Vellmark"], hops=[
        ("Velsing Maritime Museum", "Velsing Maritime Museum", "founded by", "Johan Velsing", "Who founded the Velsing Maritime Museum?"),
        ("Johan Velsing", "Johan Velsing", "grandmother", "Marta Velsing", "Who was the grandmother of #1?"),
        ("Marta Velsing", "Marta Velsing", "place of birth", "Brenn", "Where was #2 born?"),
        ("Brenn", "Brenn", "located in province", "Vellmark", "In which province is #3?"),
    ]),
    dict(q="On which river lies the birthplace of the founder of the publisher of The Salt Orchard?",
         a=["Little Vell", "the Little Vell"], hops=[
        ("The Salt Orchard", "The Salt Orchard", "publisher", "Greywater Press", "Who published The Salt Orchard?"),
        ("Greywater Press", "Greywater Press", "founded by", "Hedda Lorn", "Who founded #1?"),
        ("Hedda Lorn", "Hedda Lorn", "place of birth", "Halvers", "Where was #2 born?"),
        ("Halvers", "Halvers", "located on river", "Little Vell", "On which river lies #3?"),
    ]),
    dict(q="At the mouth of which river was the founder of the company that built the Stormwren born?", a=VELL, hops=[
        ("Stormwren", "Stormwren", "manufacturer", "Harrowmere Shipbuilding Company", "Which company built the Stormwren?"),
        ("Harrowmere Shipbuilding Company", "Harrowmere Shipbuilding Company", "founded by", "Edvard Sallow", "Who founded #1?"),
        ("Edvard Sallow", "Edvard Sallow", "place of birth", "Harrowmere", "Where was #2 born?"),
        ("Harrowmere", "Harrowmere", "located at the mouth of", "Vell", "At the mouth of which river lies #3?"),
    ]),
    dict(q="In which river valley was the woman after whom the home ground of Ardlow Rovers is named born?",
         a=["Vell valley", "the Vell valley", "Vell", "the Vell"], hops=[
        ("Ardlow Rovers", "Ardlow Rovers", "home ground", "Corvel Park", "What is the home ground of Ardlow Rovers?"),
        ("Corvel Park", "Corvel Park", "named after", "Ana Corvel", "After whom is #1 named?"),
        ("Ana Corvel", "Ana Corvel", "place of birth", "Drusk", "Where was #2 born?"),
        ("Drusk", "Drusk", "located in", "Vell valley", "In which river valley lies #3?"),
    ]),
    dict(q="In which hills lies the birthplace of the founder of the shipyard that built the paddle steamer Queen Sigrun?",
         a=["Corva Hills", "the Corva Hills"], hops=[
        ("Queen Sigrun (ship)", "Queen Sigrun", "manufacturer", "Tamber Yards", "Which shipyard built the paddle steamer Queen Sigrun?"),
        ("Tamber Yards", "Tamber Yards", "founded by", "Lucan Dorrice", "Who founded #1?"),
        ("Lucan Dorrice", "Lucan Dorrice", "place of birth", "Corvaine", "Where was #2 born?"),
        ("Corvaine", "Corvaine", "located at the edge of", "Corva Hills", "In which hills lies #3?"),
    ]),
    # ===== comparisons =====================================================
    dict(type="comparison", q="Which was founded first, Ostrel Brewing or Brenn Brewery?", a=["Ostrel Brewing"], hops=[
        ("Ostrel Brewing", "Ostrel Brewing", "inception", "1894", "When was Ostrel Brewing founded?"),
        ("Brenn Brewery", "Brenn Brewery", "inception", "1902", "When was Brenn Brewery founded?"),
    ]),
    dict(type="comparison", q="Which shipbuilder was founded earlier, Velsing Shipyards or the Harrowmere Shipbuilding Company?",
         a=["Velsing Shipyards"], hops=[
        ("Velsing Shipyards", "Velsing Shipyards", "inception", "1851", "When was Velsing Shipyards founded?"),
        ("Harrowmere Shipbuilding Company", "Harrowmere Shipbuilding Company", "inception", "1860",
         "When was the Harrowmere Shipbuilding Company founded?"),
    ]),
    dict(type="comparison", q="Were Ana Corvel and Piet Lorrow citizens of the same country?", a=["no"], hops=[
        ("Ana Corvel", "Ana Corvel", "country of citizenship", "Kestria", "Which country was Ana Corvel a citizen of?"),
        ("Piet Lorrow", "Piet Lorrow", "country of citizenship", "Orvland", "Which country was Piet Lorrow a citizen of?"),
    ]),
    dict(type="comparison", q="Are Anselm Kray and Teodor Velsing of the same nationality?", a=["yes"], hops=[
        ("Anselm Kray", "Anselm Kray", "country of citizenship", "Dalsgor", "What was Anselm Kray's nationality?"),
        ("Teodor Velsing", "Teodor Velsing", "country of citizenship", "Dalsgor", "What was Teodor Velsing's nationality?"),
    ]),
    dict(type="comparison", q="Which band was formed first, Copper Finch or The Lantern Thieves?", a=["Copper Finch"], hops=[
        ("Copper Finch", "Copper Finch", "inception", "1965", "When was Copper Finch formed?"),
        ("The Lantern Thieves", "The Lantern Thieves", "inception", "1974", "When were The Lantern Thieves formed?"),
    ]),
    dict(type="comparison", q="Who was born first, Tobias Wrenfield or Marta Velsing?", a=["Marta Velsing"], hops=[
        ("Tobias Wrenfield", "Tobias Wrenfield", "date of birth", "1832", "When was Tobias Wrenfield born?"),
        ("Marta Velsing", "Marta Velsing", "date of birth", "1815", "When was Marta Velsing born?"),
    ]),
    dict(type="comparison", q="Which is older, Penmarrow College or Kellmarsh University?", a=["Kellmarsh University"], hops=[
        ("Penmarrow College", "Penmarrow College", "inception", "1612", "When was Penmarrow College founded?"),
        ("Kellmarsh University", "Kellmarsh University", "inception", "1540", "When was Kellmarsh University founded?"),
    ]),
    dict(type="comparison", q="Which river is longer, the Vell or the Osk?", a=VELL, hops=[
        ("Vell River", "Vell", "length", "310 kilometres", "How long is the Vell?"),
        ("Osk River", "Osk", "length", "180 kilometres", "How long is the Osk?"),
    ]),
    dict(type="comparison", q="Are Cinder Records and Northline Records based in the same city?", a=["no"], hops=[
        ("Cinder Records", "Cinder Records", "located in", "Port Vaudrin", "Where is Cinder Records based?"),
        ("Northline Records", "Northline Records", "located in", "Harrowmere", "Where is Northline Records based?"),
    ]),
    dict(type="comparison", q="Which novel was published first, The Salt Orchard or The Glass Ferry?", a=["The Salt Orchard"], hops=[
        ("The Salt Orchard", "The Salt Orchard", "publication date", "1934", "When was The Salt Orchard published?"),
        ("The Glass Ferry", "The Glass Ferry", "publication date", "1958", "When was The Glass Ferry published?"),
    ]),
    dict(type="comparison", q="Were Lena Varro and Piers Dunmore both from Orvland?", a=["yes"], hops=[
        ("Lena Varro", "Lena Varro", "country of citizenship", "Orvland", "Which country was Lena Varro from?"),
        ("Piers Dunmore", "Piers Dunmore", "country of citizenship", "Orvland", "Which country was Piers Dunmore from?"),
    ]),
    dict(type="comparison", q="Which ship was launched first, the Aldry Star or the Stormwren?", a=["Aldry Star", "the Aldry Star"], hops=[
        ("Aldry Star", "Aldry Star", "launched", "1889", "When was the Aldry Star launched?"),
        ("Stormwren", "Stormwren", "launched", "1912", "When was the Stormwren launched?"),
    ]),
    dict(type="comparison", q="Which publisher was founded earlier, Greywater Press or Alder & Finch?", a=["Alder & Finch"], hops=[
        ("Greywater Press", "Greywater Press", "inception", "1903", "When was Greywater Press founded?"),
        ("Alder & Finch", "Alder & Finch", "inception", "1878", "When was Alder & Finch founded?"),
    ]),
    dict(type="comparison", q="Are Corvaine and Tamberford in the same country?", a=["yes"], hops=[
        ("Corvaine", "Corvaine", "country", "Marenthe", "In which country is Corvaine?"),
        ("Tamberford", "Tamberford", "country", "Marenthe", "In which country is Tamberford?"),
    ]),
]

# ---------------------------------------------------------------------------
# Knowledge graph: for every passage, the triples an ideal extractor would produce
# from it (the style of kg/triple_demos.json: the head is usually the title
# entity, tails sharing a relation are joined by commas, dates are kept as written).
# Heads and tails are spans of the passage (each part of a comma-joined tail is).
# Every gold triple of the questions appears verbatim under the passage that states it.
# ---------------------------------------------------------------------------

TRIPLES: dict[str, list[tuple[str, str, str]]] = {
    # --- Countries ---------------------------------------------------------
    "Kestria": [
        ("Kestria", "is a", "republic"),
        ("Kestria", "located on", "northern shore of the Grisel Sea"),
        ("Kestria", "capital", "Harrowmere"),
        ("Kestria", "largest city", "Harrowmere"),
        ("Kestria", "became a republic in", "1871"),
        ("Duke Aurel", "abdicated in", "1871"),
        ("Kestria", "first president", "Ada Renwick"),
        ("Kestria", "borders", "Orvland"),
        ("Serin River", "forms most of the border of Kestria with", "Orvland"),
        ("Kestria", "economy built on", "wool, brewing, shipbuilding"),
    ],
    "Orvland": [
        ("Orvland", "is a", "landlocked kingdom"),
        ("Orvland", "located east of", "Kestria"),
        ("Orvland", "located south of", "Dalsgor"),
        ("Orvland", "capital", "Tessary"),
        ("Tessary", "located on shore of", "Lake Ammer"),
        ("Orvland", "ruled by", "House of Odo"),
        ("House of Odo", "ruling since", "fifteenth century"),
        ("Orvland", "currency", "orvel"),
        ("Orvland", "chief exports", "glass, paper, timber"),
    ],
    "Marenthe": [
        ("Marenthe", "is a", "maritime republic"),
        ("Marenthe", "located on", "southern shore of the Grisel Sea"),
        ("Marenthe", "capital", "Port Vaudrin"),
        ("Marenthe", "known for", "shipyards"),
        ("Marenthe", "shipyards since", "early nineteenth century"),
        ("Marenthe", "principal rivers", "Tamber, Ebbren"),
    ],
    "Dalsgor": [
        ("Dalsgor", "is a", "mountainous constitutional monarchy"),
        ("Dalsgor", "located north of", "Orvland"),
        ("Dalsgor", "capital", "Ulmstead"),
        ("Dalsgor", "largest city", "Ulmstead"),
        ("Ulm Range", "covers much of", "Dalsgor"),
        ("Ulm Range", "mines produced", "iron, copper"),
        ("Dalsgor", "northern coast faces", "Haldor Sea"),
    ],
    # --- Seas and lakes ----------------------------------------------------
    "Grisel Sea": [
        ("Grisel Sea", "is an", "inland sea"),
        ("Grisel Sea", "bordered by", "Kestria, Marenthe"),
        ("Grisel Sea", "largest port", "Port Vaudrin"),
        ("Port Vaudrin", "located on", "Bay of Sollis"),
        ("Vell", "empties into the Grisel Sea at", "Harrowmere"),
        ("Tamber", "reaches the Grisel Sea through", "Bay of Sollis"),
        ("Ebbren", "reaches the Grisel Sea through", "Bay of Sollis"),
        ("Grisel Sea", "supports", "herring fishery"),
        ("Grisel Sea", "herring fishery since", "medieval times"),
    ],
    "Bay of Sollis": [
        ("Bay of Sollis", "is a", "wide arm of the Grisel Sea"),
        ("Bay of Sollis", "located on coast of", "Marenthe"),
        ("Bay of Sollis", "western shore", "Port Vaudrin"),
        ("Bay of Sollis", "eastern side", "Sollis, Ebbmouth"),
        ("Sollis", "is a", "fishing town"),
        ("Bay of Sollis", "rivers emptying into it", "Tamber, Ebbren"),
    ],
    "Haldor Sea": [
        ("Haldor Sea", "is a", "cold sea"),
        ("Haldor Sea", "located off", "northern coast of Dalsgor"),
        ("Haldor Sea", "shores frozen for", "up to four months each winter"),
        ("Caddow River", "flows into", "Haldor Sea"),
        ("Caddow River", "mouth at", "Vessholm"),
        ("Haldor Sea", "eastern coast charted by", "expedition of the Stormwren"),
        ("expedition of the Stormwren", "took place", "between 1913 and 1915"),
    ],
    "Lake Ammer": [
        ("Lake Ammer", "is the", "largest lake in Orvland"),
        ("Lake Ammer", "area", "about 610 square kilometres"),
        ("Lake Ammer", "fed by", "Osk"),
        ("Osk", "enters Lake Ammer from", "north"),
        ("Lake Ammer", "drained by", "Serin"),
        ("Lake Ammer", "western shore", "Tessary"),
        ("Lake Ammer", "eastern shore", "Drusk"),
        ("Drusk", "is a", "fishing village"),
        ("Lake Ammer", "paddle steamers since", "1867"),
    ],
    "Aldry Tarn": [
        ("Aldry Tarn", "is a", "small mountain lake"),
        ("Aldry Tarn", "located below", "summit of Mount Aldry"),
        ("Aldry Tarn", "located in", "Korrin Hills"),
        ("Aldry Tarn", "country", "Kestria"),
        ("Aldry Tarn", "described as source of", "Vell"),
        ("Vell", "actually rises from", "springs two kilometres to the south"),
        ("Aldry Tarn", "popular with", "walkers from Pellory"),
    ],
    "Lake Vessen": [
        ("Lake Vessen", "is a", "mountain lake"),
        ("Lake Vessen", "located in", "Ulm Range"),
        ("Lake Vessen", "country", "Dalsgor"),
        ("Lake Vessen", "drained by", "Vess"),
        ("Vess", "is a", "short tributary"),
        ("Vess", "tributary of", "Caddow River"),
        ("Lake Vessen", "hydroelectric dam built in", "1952"),
    ],
    # --- Mountains and hills -----------------------------------------------
    "Korrin Hills": [
        ("Korrin Hills", "is a", "range of low mountains"),
        ("Korrin Hills", "located in", "eastern Kestria"),
        ("Korrin Hills", "highest point", "Mount Aldry"),
        ("Mount Aldry", "elevation", "1,412 metres"),
        ("Vell", "rises on the southern slopes of", "Korrin Hills"),
        ("Korrin Hills", "mined for", "lead, silver"),
        ("Korrin Hills", "mined since", "twelfth century"),
        ("Korrin Hills", "main town", "Pellory"),
    ],
    "Mount Aldry": [
        ("Mount Aldry", "is the", "highest peak of the Korrin Hills"),
        ("Mount Aldry", "part of", "Korrin Hills"),
        ("Mount Aldry", "located in", "eastern Kestria"),
        ("Mount Aldry", "elevation", "1,412 metres"),
        ("Mount Aldry", "named after", "Aldry"),
        ("Aldry", "is a", "shepherd of local legend"),
        ("Mount Aldry", "summit is site of", "astronomical observatory"),
        ("Mount Aldry", "observatory on summit since", "1908"),
    ],
    "Ulm Range": [
        ("Ulm Range", "is a", "chain of mountains"),
        ("Ulm Range", "located in", "Dalsgor"),
        ("Ulm Range", "runs along border with", "Orvland"),
        ("Osk", "rises in", "Ulm Range"),
        ("Caddow", "rises in", "Ulm Range"),
        ("Osk", "flows south into", "Orvland"),
        ("Caddow", "flows north across", "Dalsgor"),
        ("Karsk", "is a", "mining town"),
        ("Karsk", "located in", "high valley of the range"),
        ("Ulm Range", "highest summit", "Mount Hesk"),
        ("Mount Hesk", "elevation", "2,908 metres"),
    ],
    "Mount Hesk": [
        ("Mount Hesk", "highest mountain of", "Ulm Range, Dalsgor"),
        ("Mount Hesk", "elevation", "2,908 metres"),
        ("Mount Hesk", "first climbed in", "1871"),
        ("Mount Hesk", "first climbed by party led by", "Anders Kray"),
        ("Anders Kray", "occupation", "surveyor"),
        ("Mount Hesk", "glacier on northern face feeds", "upper Caddow River"),
    ],
    "Corva Hills": [
        ("Corva Hills", "is a", "range of wooded hills"),
        ("Corva Hills", "located in", "eastern Marenthe"),
        ("Ebbren River", "rises in", "Corva Hills"),
        ("Corvaine", "is a", "hill town"),
        ("Corvaine", "stands on western edge of", "Corva Hills"),
    ],
    # --- Rivers ------------------------------------------------------------
    "Vell River": [
        ("Vell River", "is the", "longest river in Kestria"),
        ("Vell", "length", "310 kilometres"),
        ("Vell", "flows from", "Korrin Hills"),
        ("Vell", "flows into", "Grisel Sea"),
        ("Vell", "runs west past", "Brenn"),
        ("Vell", "receives", "Serin"),
        ("Vell", "flows through", "Drusk, Ardlow"),
        ("Vell", "mouth at", "Harrowmere"),
        ("Vell", "middle course known as", "Vell valley"),
    ],
    "Serin River": [
        ("Serin River", "river of", "Orvland, Kestria"),
        ("Serin River", "length", "about 140 kilometres"),
        ("Serin", "drains", "Lake Ammer"),
        ("Serin", "flows", "south-west"),
        ("Serin", "forms most of the border between", "Orvland, Kestria"),
        ("Serin River", "towns facing each other across it", "Harl, Harlow"),
        ("Harl", "is a", "Kestrian town"),
        ("Harlow", "is an", "Orvlandish town"),
        ("Serin", "joins the Vell at", "Brenn"),
        ("Serin", "joins", "Vell"),
    ],
    "Osk River": [
        ("Osk River", "river of", "Dalsgor, Orvland"),
        ("Osk", "length", "180 kilometres"),
        ("Osk", "rises in", "Ulm Range"),
        ("Osk", "flows", "south"),
        ("Osk", "flows through", "Ruddow, Oskbridge, Vennick"),
        ("Osk", "flows into", "Lake Ammer"),
        ("Osk", "main tributary", "Little Vell"),
        ("Osk", "receives the Little Vell at", "Oskbridge"),
    ],
    "Little Vell": [
        ("Little Vell", "is a", "short river"),
        ("Little Vell", "located in", "Orvland"),
        ("Little Vell", "tributary of", "Osk"),
        ("Little Vell", "no connection with", "Vell of Kestria"),
        ("Little Vell", "name comes from", "old Orvlandish word for a mill stream"),
        ("Little Vell", "length", "42 kilometres"),
        ("Little Vell", "flows past", "Halvers"),
        ("Halvers", "is a", "paper-making town"),
        ("Little Vell", "joins the Osk at", "Oskbridge"),
    ],
    "Tamber River": [
        ("Tamber River", "is the", "principal river of Marenthe"),
        ("Tamber River", "length", "about 220 kilometres"),
        ("Tamber", "flows", "north"),
        ("Tamber", "flows through", "Tamberford"),
        ("Tamberford", "is a", "market town"),
        ("Tamber", "empties into", "Bay of Sollis"),
        ("Tamber", "mouth at", "Port Vaudrin"),
        ("lower Tamber", "lined with shipyards since", "1820s"),
    ],
    "Ebbren River": [
        ("Ebbren River", "is a", "river"),
        ("Ebbren River", "located in", "eastern Marenthe"),
        ("Ebbren River", "length", "about 70 kilometres"),
        ("Ebbren", "rises in", "Corva Hills"),
        ("Ebbren", "passes", "Corvaine"),
        ("Corvaine", "is a", "hill town"),
        ("Ebbren", "empties into", "Bay of Sollis"),
        ("Ebbren", "mouth at", "Ebbmouth"),
        ("Ebbren", "valley known for", "apple orchards, cider"),
    ],
    "Caddow River": [
        ("Caddow River", "is the", "longest river in Dalsgor"),
        ("Caddow", "source in", "Ulm Range"),
        ("Caddow", "flows", "north"),
        ("Caddow", "flows through", "Ulmstead, Kessary, Drossel"),
        ("Caddow", "flows into", "Haldor Sea"),
        ("Caddow", "mouth at", "Vessholm"),
        ("Caddow", "navigable by barges below", "Ulmstead"),
    ],
    # --- Provinces ---------------------------------------------------------
    "Vellmark": [
        ("Vellmark", "is a", "province of Kestria"),
        ("Vellmark", "covers", "middle and upper Vell valley"),
        ("Vellmark", "capital", "Ardlow"),
        ("Vellmark", "other towns", "Drusk, Brenn"),
        ("Vellmark", "created in", "1872"),
    ],
    "Saltmoor": [
        ("Saltmoor", "is a", "coastal province"),
        ("Saltmoor", "country", "Kestria"),
        ("Saltmoor", "lies along", "Grisel Sea"),
        ("Saltmoor", "capital", "Keswin"),
        ("Saltmoor", "named after", "salt marshes"),
    ],
    # --- Towns of Kestria --------------------------------------------------
    "Harrowmere": [
        ("Harrowmere", "capital of", "Kestria"),
        ("Harrowmere", "largest city of", "Kestria"),
        ("Harrowmere", "located at the mouth of", "Vell"),
        ("Harrowmere", "located on", "Grisel Sea"),
        ("Harrowmere", "seat of", "Penmarrow College"),
        ("Harrowmere", "home of", "Harrowmere Shipbuilding Company"),
        ("Harrowmere", "harbour fort built in", "sixteenth century"),
        ("Harrowmere", "harbour fort built to guard against", "raiders"),
    ],
    "Drusk": [
        ("Drusk", "is a", "market town"),
        ("Drusk", "located in", "Vell valley"),
        ("Drusk", "country", "Kestria"),
        ("Drusk", "about 40 kilometres upstream of", "Ardlow"),
        ("Drusk", "weekly wool market since", "1530"),
        ("Drusk", "home of", "FC Drusk"),
        ("Drusk", "not to be confused with", "fishing village of Drusk on Lake Ammer"),
    ],
    "Ardlow": [
        ("Ardlow", "is a", "town"),
        ("Ardlow", "located on river", "Vell"),
        ("Ardlow", "country", "Kestria"),
        ("Ardlow", "capital of", "Vellmark"),
        ("Ardlow", "reached by", "Kestrian Northern Railway"),
        ("Kestrian Northern Railway", "reached Ardlow in", "1858"),
        ("Ardlow", "home of", "Ardlow Institute of Technology, Ostrel Brewing, Ardlow Rovers"),
        ("St. Benna's Cathedral", "stands in", "old market square"),
        ("St. Benna's Cathedral", "completed", "1402"),
    ],
    "Brenn": [
        ("Brenn", "is a", "river port"),
        ("Brenn", "located in province", "Vellmark"),
        ("Brenn", "country", "Kestria"),
        ("Brenn", "located at confluence of", "Serin, Vell"),
        ("Brenn", "home of", "Brenn Brewery"),
        ("Brenn Brewery", "operated", "1902 to 1979"),
        ("Brenn", "has", "eighteenth-century lock on the Vell"),
    ],
    "Harl": [
        ("Harl", "is a", "small town"),
        ("Harl", "country", "Kestria"),
        ("Harl", "located on river", "Serin"),
        ("Harl", "located on", "western bank of the Serin River"),
        ("Harl", "faces", "Harlow"),
        ("Harl", "linked to Harlow by", "ferry"),
        ("Harl", "known for", "willow basket weaving"),
    ],
    "Keswin": [
        ("Keswin", "is a", "port town"),
        ("Keswin", "located on", "Grisel Sea coast"),
        ("Keswin", "country", "Kestria"),
        ("Keswin", "capital of", "Saltmoor"),
        ("Keswin", "home of", "Velsing Shipyards, Velsing Maritime Museum"),
        ("Keswin", "earlier trades", "rope making, salt panning"),
    ],
    "Pellory": [
        ("Pellory", "is the", "main town of the Korrin Hills"),
        ("Pellory", "located in", "Korrin Hills"),
        ("Pellory", "located in", "eastern Kestria"),
        ("Pellory", "grew up around", "lead and silver mines"),
        ("Pellory mines", "worked from", "twelfth century"),
        ("Pellory mines", "worked until", "1961"),
        ("varronite", "is a", "rare mineral"),
        ("varronite", "first described from", "Pellory mines"),
        ("varronite", "first described in", "1936"),
    ],
    "Ostrel": [
        ("Ostrel", "is a", "hamlet"),
        ("Ostrel", "located in", "Korrin Hills"),
        ("Ostrel", "country", "Kestria"),
        ("Ostrel", "population", "fewer than a hundred inhabitants"),
        ("Ostrel Brewing", "named after", "Ostrel"),
        ("Ostrel Brewing", "located in", "Ardlow"),
        ("Ostrel", "chapel dating from", "1688"),
    ],
    # --- Towns of Orvland --------------------------------------------------
    "Tessary": [
        ("Tessary", "capital of", "Orvland"),
        ("Tessary", "largest city of", "Orvland"),
        ("Tessary", "located on", "western shore of Lake Ammer"),
        ("Tessary", "home of", "Kellmarsh University, Tessary Conservatory"),
        ("Tessary", "oldest university", "Kellmarsh University"),
        ("Kellmarsh University", "is the", "oldest university in Orvland"),
        ("Tessary", "hosts", "Ammer Lantern Festival"),
        ("Ammer Lantern Festival", "held", "each autumn"),
    ],
    "Vennick": [
        ("Vennick", "is a", "town"),
        ("Vennick", "located on river", "Osk"),
        ("Vennick", "country", "Orvland"),
        ("Vennick", "known for", "glassworks"),
        ("Vennick", "oldest glassworks opened in", "1714"),
        ("Vennick", "birthplace of", "Lena Varro"),
        ("Lena Varro", "occupation", "chemist"),
    ],
    "Oskbridge": [
        ("Oskbridge", "is a", "town"),
        ("Oskbridge", "country", "Orvland"),
        ("Oskbridge", "named after", "fourteenth-century stone bridge"),
        ("Oskbridge", "located on river", "Osk"),
        ("Little Vell", "joins the Osk below", "Oskbridge"),
        ("Oskbridge", "holds", "horse market every spring"),
    ],
    "Ruddow": [
        ("Ruddow", "is a", "railway town"),
        ("Ruddow", "located on", "upper Osk River"),
        ("Ruddow", "located in", "northern Orvland"),
        ("Ruddow", "junction of", "Osk Valley Railway"),
        ("Ruddow", "became a junction in", "1879"),
        ("Ruddow", "birthplace of", "Piet Lorrow"),
        ("Piet Lorrow", "occupation", "brewer"),
    ],
    "Halvers": [
        ("Halvers", "is a", "town"),
        ("Halvers", "country", "Orvland"),
        ("Halvers", "located on river", "Little Vell"),
        ("Little Vell", "tributary of", "Osk"),
        ("Halvers", "centre of", "paper making"),
        ("Halvers", "paper making since", "seventeenth century"),
        ("Halvers", "largest paper mill owned by", "Lorn family"),
    ],
    "Drusk (Orvland)": [
        ("Drusk", "is a", "fishing village"),
        ("Drusk", "country", "Orvland"),
        ("Drusk", "located on", "eastern shore of Lake Ammer"),
        ("Drusk", "home of", "Lake Ammer Brewing Company"),
        ("Lake Ammer Brewing Company", "inception", "1908"),
        ("Drusk", "birthplace of", "Piers Dunmore, Karl Vessen"),
        ("Piers Dunmore", "occupation", "poet"),
        ("Karl Vessen", "occupation", "brewer"),
        ("Drusk", "not to be confused with", "Kestrian market town of Drusk"),
    ],
    "Harlow": [
        ("Harlow", "is a", "town"),
        ("Harlow", "country", "Orvland"),
        ("Harlow", "located on", "eastern bank of the Serin River"),
        ("Harlow", "opposite", "Harl"),
        ("Harlow", "customs house built in", "1790"),
        ("Harlow", "customs house now", "museum of the border"),
        ("Harlow", "known for", "autumn horse fair"),
    ],
    "Brennick": [
        ("Brennick", "is a", "village"),
        ("Brennick", "country", "Orvland"),
        ("Brennick", "located near", "point where the Osk enters Lake Ammer"),
        ("Brennick", "often confused with", "Brenn"),
        ("Brennick", "known for", "reed thatching"),
    ],
    # --- Towns of Marenthe -------------------------------------------------
    "Port Vaudrin": [
        ("Port Vaudrin", "capital of", "Marenthe"),
        ("Port Vaudrin", "is the", "largest port on the Grisel Sea"),
        ("Port Vaudrin", "located at mouth of", "Tamber"),
        ("Port Vaudrin", "located on", "western shore of the Bay of Sollis"),
        ("Port Vaudrin", "home of", "Tamber Yards, Port Vaudrin Naval Academy, Cinder Records"),
    ],
    "Tamberford": [
        ("Tamberford", "is a", "market town"),
        ("Tamberford", "located on", "Tamber River"),
        ("Tamberford", "country", "Marenthe"),
        ("Tamberford", "grew up around", "ford used by cattle drovers"),
        ("Tamberford", "received town charter in", "1611"),
        ("Tamberford", "birthplace of", "Sabine Orrel"),
    ],
    "Corvaine": [
        ("Corvaine", "is a", "hill town"),
        ("Corvaine", "located in", "eastern Marenthe"),
        ("Corvaine", "country", "Marenthe"),
        ("Corvaine", "located on", "Ebbren River"),
        ("Corvaine", "located at the edge of", "Corva Hills"),
        ("Corvaine", "known for", "cider, walled old quarter"),
        ("Corvaine", "birthplace of", "Lucan Dorrice, Jules Amary"),
    ],
    "Ebbmouth": [
        ("Ebbmouth", "is a", "fishing port"),
        ("Ebbmouth", "country", "Marenthe"),
        ("Ebbmouth", "located at the mouth of", "Ebbren"),
        ("Ebbmouth", "located on", "Bay of Sollis"),
        ("Ebbmouth", "known for", "smoked herring"),
        ("Ebbmouth", "birthplace of", "Remy Castell"),
    ],
    "Sollis": [
        ("Sollis", "is a", "small fishing town"),
        ("Sollis", "located on", "eastern shore of the Bay of Sollis"),
        ("Sollis", "country", "Marenthe"),
        ("Bay of Sollis", "named after", "Sollis"),
        ("Sollis", "recorded as early as", "1204"),
        ("Sollis", "lighthouse since", "1859"),
    ],
    # --- Towns of Dalsgor --------------------------------------------------
    "Ulmstead": [
        ("Ulmstead", "capital of", "Dalsgor"),
        ("Ulmstead", "largest city of", "Dalsgor"),
        ("Ulmstead", "located on river", "Caddow"),
        ("Ulmstead", "located in", "centre of the country"),
        ("Ulmstead", "home of", "Brannock University, royal palace of Dalsgor"),
        ("Ulmstead", "birthplace of", "Anselm Kray"),
        ("Anselm Kray", "occupation", "astronomer"),
    ],
    "Karsk": [
        ("Karsk", "is a", "mining town"),
        ("Karsk", "located in", "high valley of the Ulm Range"),
        ("Karsk", "country", "Dalsgor"),
        ("Karsk", "mined", "copper"),
        ("Karsk", "copper mined since", "fifteenth century"),
        ("Karsk", "mining museum in", "old smelting house"),
    ],
    "Drossel": [
        ("Drossel", "is a", "town"),
        ("Drossel", "located on", "lower Caddow River"),
        ("Drossel", "country", "Dalsgor"),
        ("Drossel", "known for", "timber trade, summer river regatta"),
        ("Drossel", "birthplace of", "Teodor Velsing"),
        ("Teodor Velsing", "occupation", "painter"),
    ],
    "Kessary": [
        ("Kessary", "is a", "town"),
        ("Kessary", "country", "Dalsgor"),
        ("Kessary", "located on", "Caddow River"),
        ("Kessary", "located between", "Ulmstead, Drossel"),
        ("Kessary", "often confused with", "Tessary"),
        ("Tessary", "capital of", "Orvland"),
        ("Kessary", "ironworks founded in", "1866"),
        ("Kessary", "ironworks once the largest in", "Dalsgor"),
    ],
    "Vessholm": [
        ("Vessholm", "is a", "port town"),
        ("Vessholm", "country", "Dalsgor"),
        ("Vessholm", "located at mouth of", "Caddow River"),
        ("Vessholm", "located on", "Haldor Sea"),
        ("Vessholm", "harbour kept open in winter by", "icebreakers"),
        ("Stormwren", "sailed from", "Vessholm"),
        ("Stormwren", "expedition of", "1913"),
    ],
    "Drusk Moor": [
        ("Drusk Moor", "is an", "upland heath"),
        ("Drusk Moor", "located in", "Ulm Range"),
        ("Drusk Moor", "country", "Dalsgor"),
        ("Drusk Moor", "no link with", "Kestrian town of Drusk"),
        ("Drusk Moor", "name comes from", "old Dalsgorian word for thrush"),
        ("Drusk Moor", "breeding ground for", "curlews"),
    ],
    # --- Rulers and statesmen ----------------------------------------------
    "Ada Renwick": [
        ("Ada Renwick", "date of birth", "1820"),
        ("Ada Renwick", "date of death", "1894"),
        ("Ada Renwick", "country of citizenship", "Kestria"),
        ("Ada Renwick", "occupation", "lawyer, politician"),
        ("Ada Renwick", "led", "reform movement of the 1860s"),
        ("Ada Renwick", "place of birth", "Ardlow"),
        ("Ada Renwick", "educated at", "Penmarrow College"),
        ("Ada Renwick", "studied", "law"),
        ("Ada Renwick", "head of state", "1871 to 1878"),
    ],
    "Duke Aurel of Kestria": [
        ("Duke Aurel of Kestria", "date of birth", "1820"),
        ("Duke Aurel of Kestria", "date of death", "1889"),
        ("Duke Aurel of Kestria", "position held", "last Duke of Kestria"),
        ("Duke Aurel of Kestria", "reigned from", "1849"),
        ("Duke Aurel of Kestria", "abdicated in", "1871"),
        ("Duke Aurel of Kestria", "spent his final years in exile in", "Tessary"),
        ("Duke Aurel of Kestria", "palace in", "Harrowmere"),
        ("Duke Aurel of Kestria", "palace now houses", "national parliament"),
    ],
    "Renwick Bridge": [
        ("Renwick Bridge", "is a", "road bridge"),
        ("Renwick Bridge", "crosses", "Vell"),
        ("Renwick Bridge", "located in", "Harrowmere"),
        ("Renwick Bridge", "completed", "1899"),
        ("Renwick Bridge", "named after", "Ada Renwick"),
        ("Ada Renwick", "is the", "first President of Kestria"),
        ("Renwick Bridge", "designed by", "Carl Dorrice"),
        ("Carl Dorrice", "occupation", "engineer"),
    ],
    "Odo II of Orvland": [
        ("Odo II of Orvland", "date of birth", "1502"),
        ("Odo II of Orvland", "date of death", "1561"),
        ("Odo II of Orvland", "position held", "King of Orvland"),
        ("Odo II of Orvland", "reigned from", "1531"),
        ("Odo II of Orvland", "reformed", "royal courts"),
        ("Odo II of Orvland", "founded", "university in his capital"),
        ("Odo II of Orvland", "founded university in", "1540"),
        ("Odo II of Orvland", "succeeded by", "Queen Ermina"),
        ("Odo II of Orvland", "daughter", "Queen Ermina"),
    ],
    "Queen Ermina of Orvland": [
        ("Queen Ermina of Orvland", "date of birth", "1530"),
        ("Queen Ermina of Orvland", "date of death", "1590"),
        ("Queen Ermina of Orvland", "reigned", "1561 to 1590"),
        ("Queen Ermina of Orvland", "father", "King Odo II"),
        ("royal palace in Tessary", "rebuilt during reign of", "Queen Ermina"),
        ("royal palace in Tessary", "rebuilt after", "fire"),
    ],
    "House of Odo": [
        ("House of Odo", "is the", "royal family of Orvland"),
        ("House of Odo", "came to the throne in", "1467"),
        ("House of Odo", "came to the throne with", "King Odo I"),
        ("House of Odo", "members", "King Odo II, Queen Ermina, Queen Sigrun"),
    ],
    "Queen Sigrun of Orvland": [
        ("Queen Sigrun of Orvland", "date of birth", "1819"),
        ("Queen Sigrun of Orvland", "date of death", "1888"),
        ("Queen Sigrun of Orvland", "reigned from", "1840"),
        ("Queen Sigrun of Orvland", "reign saw building of", "first railways in Orvland"),
        ("paddle steamer on Lake Ammer", "named in honour of", "Queen Sigrun of Orvland"),
    ],
    "Ivar Brannock": [
        ("Ivar Brannock", "date of birth", "1851"),
        ("Ivar Brannock", "date of death", "1919"),
        ("Ivar Brannock", "country of citizenship", "Dalsgor"),
        ("Ivar Brannock", "occupation", "statesman"),
        ("Ivar Brannock", "position held", "prime minister of Dalsgor"),
        ("Ivar Brannock", "prime minister", "1894 to 1906"),
        ("Ivar Brannock", "place of birth", "Kessary"),
        ("Ivar Brannock", "campaigned for", "national university"),
        ("national university", "founded", "two years after his death"),
        ("national university", "named after", "Ivar Brannock"),
    ],
    "Johan Velsing": [
        ("Johan Velsing", "date of birth", "1880"),
        ("Johan Velsing", "date of death", "1955"),
        ("Johan Velsing", "country of citizenship", "Kestria"),
        ("Johan Velsing", "occupation", "lawyer, politician"),
        ("Johan Velsing", "position held", "President of Kestria"),
        ("Johan Velsing", "president", "1931 to 1939"),
        ("Johan Velsing", "place of birth", "Keswin"),
        ("Johan Velsing", "grandmother", "Marta Velsing"),
        ("Marta Velsing", "occupation", "shipbuilder"),
        ("Johan Velsing", "educated at", "Penmarrow College"),
        ("Johan Velsing", "studied", "law"),
        ("Johan Velsing", "founded", "Velsing Maritime Museum"),
        ("Johan Velsing", "founded museum in", "1921"),
    ],
    "Orvel": [
        ("orvel", "currency of", "Orvland"),
        ("orvel", "introduced in", "1872"),
        ("orvel", "replaced", "old royal mark"),
        ("orvel", "divided into", "one hundred pennings"),
    ],
    # --- Breweries and brewers ---------------------------------------------
    "Ostrel Brewing": [
        ("Ostrel Brewing", "is a", "brewery"),
        ("Ostrel Brewing", "located in", "Ardlow"),
        ("Ostrel Brewing", "country", "Kestria"),
        ("Ostrel Brewing", "inception", "1894"),
        ("Ostrel Brewing", "founded by", "Ana Corvel"),
        ("Ostrel Brewing", "named after", "hamlet of Ostrel"),
        ("Ostrel", "located in", "Korrin Hills"),
        ("Ostrel Brewing", "best-known beer", "Gray Stag"),
        ("Gray Stag", "is a", "dark ale"),
        ("Gray Stag", "first brewed in", "1901"),
        ("Ostrel Brewing", "run by", "Corvel family"),
        ("Ostrel Brewing", "run by the Corvel family until", "1962"),
    ],
    "Ana Corvel": [
        ("Ana Corvel", "date of birth", "1861"),
        ("Ana Corvel", "date of death", "1930"),
        ("Ana Corvel", "country of citizenship", "Kestria"),
        ("Ana Corvel", "occupation", "brewer, businesswoman"),
        ("Ana Corvel", "place of birth", "Drusk"),
        ("Ana Corvel", "learned brewing from", "uncle in Harrowmere"),
        ("Ana Corvel", "founded", "Ostrel Brewing"),
        ("Ana Corvel", "founded brewery in", "Ardlow"),
        ("Ostrel Brewing", "named after", "her mother's home village"),
        ("Ana Corvel", "not related to", "Mattias Corvel"),
    ],
    "Lise Corvel": [
        ("Lise Corvel", "date of birth", "1889"),
        ("Lise Corvel", "date of death", "1970"),
        ("Lise Corvel", "country of citizenship", "Kestria"),
        ("Lise Corvel", "occupation", "brewer"),
        ("Lise Corvel", "mother", "Ana Corvel"),
        ("Lise Corvel", "place of birth", "Ardlow"),
        ("Lise Corvel", "ran", "Ostrel Brewing"),
        ("Lise Corvel", "ran Ostrel Brewing", "1930 until 1962"),
    ],
    "Mattias Corvel": [
        ("Mattias Corvel", "date of birth", "1812"),
        ("Mattias Corvel", "date of death", "1879"),
        ("Mattias Corvel", "country of citizenship", "Kestria"),
        ("Mattias Corvel", "occupation", "rope maker, merchant"),
        ("Mattias Corvel", "place of birth", "Keswin"),
        ("Mattias Corvel", "founded", "Corvel & Daughters"),
        ("Mattias Corvel", "founded rope works in", "1849"),
        ("Mattias Corvel", "ropes rigged", "ships built at Keswin"),
    ],
    "Corvel & Daughters": [
        ("Corvel & Daughters", "is a", "rope-making firm"),
        ("Corvel & Daughters", "located in", "Keswin"),
        ("Corvel & Daughters", "country", "Kestria"),
        ("Corvel & Daughters", "inception", "1849"),
        ("Corvel & Daughters", "founded by", "Mattias Corvel"),
        ("Corvel & Daughters", "named after", "his three daughters"),
        ("Corvel & Daughters", "run after his death by", "his three daughters"),
        ("Corvel & Daughters", "makes", "mooring lines for ships"),
    ],
    "Anja Corvel": [
        ("Anja Corvel", "date of birth", "1950"),
        ("Anja Corvel", "country of citizenship", "Kestria"),
        ("Anja Corvel", "occupation", "racing cyclist"),
        ("Anja Corvel", "place of birth", "Ardlow"),
        ("Anja Corvel", "won", "Kestrian road championship"),
        ("Anja Corvel", "road championship wins", "four times"),
        ("Anja Corvel", "not related to", "brewing Corvel family"),
    ],
    "Gray Stag (beer)": [
        ("Gray Stag", "is a", "dark ale"),
        ("Gray Stag", "brewed by", "Ostrel Brewing"),
        ("Gray Stag", "brewed in", "Ardlow"),
        ("Gray Stag", "brewed since", "1901"),
        ("Gray Stag", "named after", "stag said to roam the Korrin Hills"),
        ("Gray Stag", "no connection with", "The Gray Stag"),
    ],
    "Brenn Brewery": [
        ("Brenn Brewery", "is a", "brewery"),
        ("Brenn Brewery", "located in", "Brenn"),
        ("Brenn Brewery", "country", "Kestria"),
        ("Brenn Brewery", "inception", "1902"),
        ("Brenn Brewery", "founded by", "Oskar Tallow"),
        ("Brenn Brewery", "known for", "Serin Gold"),
        ("Serin Gold", "is a", "pale lager"),
        ("Brenn Brewery", "closed in", "1979"),
        ("Brenn Brewery", "buildings now house", "market hall"),
    ],
    "Oskar Tallow": [
        ("Oskar Tallow", "date of birth", "1868"),
        ("Oskar Tallow", "date of death", "1941"),
        ("Oskar Tallow", "country of citizenship", "Kestria"),
        ("Oskar Tallow", "occupation", "brewer"),
        ("Oskar Tallow", "place of birth", "Pellory"),
        ("Oskar Tallow", "worked in", "lead mines"),
        ("Oskar Tallow", "trained as a brewer in", "Tessary"),
        ("Oskar Tallow", "founded", "Brenn Brewery"),
        ("Oskar Tallow", "founded Brenn Brewery in", "1902"),
        ("Oskar Tallow", "ran Brenn Brewery until", "his death"),
    ],
    "Lake Ammer Brewing Company": [
        ("Lake Ammer Brewing Company", "is a", "brewery"),
        ("Lake Ammer Brewing Company", "located in", "Drusk"),
        ("Lake Ammer Brewing Company", "country", "Orvland"),
        ("Drusk", "is a", "village on Lake Ammer"),
        ("Lake Ammer Brewing Company", "inception", "1908"),
        ("Lake Ammer Brewing Company", "founded by", "Piet Lorrow"),
        ("Lake Ammer Brewing Company", "brews", "wheat beer flavoured with lake reeds"),
    ],
    "Piet Lorrow": [
        ("Piet Lorrow", "date of birth", "1875"),
        ("Piet Lorrow", "date of death", "1950"),
        ("Piet Lorrow", "country of citizenship", "Orvland"),
        ("Piet Lorrow", "occupation", "brewer"),
        ("Piet Lorrow", "place of birth", "Ruddow"),
        ("Piet Lorrow", "worked on", "timber rafts of the Osk"),
        ("Piet Lorrow", "founded", "Lake Ammer Brewing Company"),
        ("Piet Lorrow", "founded brewery in", "1908"),
        ("Piet Lorrow", "founded brewery in village of", "Drusk"),
    ],
    "Saltmoor Brewing Company": [
        ("Saltmoor Brewing Company", "is a", "brewery"),
        ("Saltmoor Brewing Company", "located in", "Keswin"),
        ("Saltmoor Brewing Company", "country", "Kestria"),
        ("Saltmoor Brewing Company", "inception", "1899"),
        ("Saltmoor Brewing Company", "founded by", "Karl Vessen"),
        ("Karl Vessen", "is an", "Orvlandish brewer"),
        ("Karl Vessen", "settled on", "coast"),
        ("Saltmoor Brewing Company", "known for", "oyster stout"),
    ],
    "Karl Vessen": [
        ("Karl Vessen", "date of birth", "1870"),
        ("Karl Vessen", "date of death", "1938"),
        ("Karl Vessen", "occupation", "brewer"),
        ("Karl Vessen", "worked in", "Kestria"),
        ("Karl Vessen", "place of birth", "Drusk"),
        ("Drusk", "is a", "fishing village on Lake Ammer"),
        ("Karl Vessen", "moved to", "Keswin"),
        ("Karl Vessen", "moved to Keswin in", "1893"),
        ("Karl Vessen", "founded", "Saltmoor Brewing Company"),
        ("Karl Vessen", "founded brewery in", "1899"),
    ],
    # --- Shipbuilding and ships --------------------------------------------
    "Velsing Shipyards": [
        ("Velsing Shipyards", "is a", "shipbuilding company"),
        ("Velsing Shipyards", "located in", "Keswin"),
        ("Velsing Shipyards", "country", "Kestria"),
        ("Velsing Shipyards", "inception", "1851"),
        ("Velsing Shipyards", "founded by", "Marta Velsing"),
        ("Velsing Shipyards", "ships built", "Aldry Star, Vell Maiden"),
        ("Aldry Star", "is a", "steamship"),
        ("Vell Maiden", "is a", "river ferry"),
        ("Velsing Shipyards", "owned by Velsing family until", "1957"),
    ],
    "Marta Velsing": [
        ("Marta Velsing", "date of birth", "1815"),
        ("Marta Velsing", "date of death", "1890"),
        ("Marta Velsing", "country of citizenship", "Kestria"),
        ("Marta Velsing", "occupation", "shipbuilder"),
        ("Marta Velsing", "place of birth", "Brenn"),
        ("Marta Velsing", "daughter of", "river barge builder"),
        ("Marta Velsing", "founded", "Velsing Shipyards"),
        ("Marta Velsing", "founded shipyard in", "1851"),
        ("Marta Velsing", "founded shipyard at", "Keswin"),
        ("Velsing Shipyards", "became", "largest shipyard in Kestria"),
    ],
    "Marta Velsing (ferry)": [
        ("Marta Velsing", "is a", "car ferry"),
        ("Marta Velsing", "launched", "1965"),
        ("Marta Velsing", "manufacturer", "Velsing Shipyards"),
        ("Marta Velsing", "named after", "company's founder"),
        ("Marta Velsing", "route", "Keswin, Port Vaudrin"),
        ("Marta Velsing", "replaced", "older steamer"),
    ],
    "Velsing Maritime Museum": [
        ("Velsing Maritime Museum", "is a", "museum of ships and seafaring"),
        ("Velsing Maritime Museum", "located in", "Keswin"),
        ("Velsing Maritime Museum", "country", "Kestria"),
        ("Velsing Maritime Museum", "inception", "1921"),
        ("Velsing Maritime Museum", "founded by", "Johan Velsing"),
        ("Velsing Maritime Museum", "collection includes", "bell of the Aldry Star"),
        ("bell of the Aldry Star", "recovered by divers in", "1952"),
    ],
    "Eira Velsing": [
        ("Eira Velsing", "date of birth", "1911"),
        ("Eira Velsing", "date of death", "1990"),
        ("Eira Velsing", "country of citizenship", "Kestria"),
        ("Eira Velsing", "occupation", "architect"),
        ("Eira Velsing", "father", "Johan Velsing"),
        ("Eira Velsing", "place of birth", "Harrowmere"),
        ("Eira Velsing", "designed", "new wing of the Velsing Maritime Museum, Tessary Opera House"),
        ("new wing of the Velsing Maritime Museum", "opened in", "1962"),
    ],
    "Teodor Velsing": [
        ("Teodor Velsing", "date of birth", "1894"),
        ("Teodor Velsing", "date of death", "1968"),
        ("Teodor Velsing", "country of citizenship", "Dalsgor"),
        ("Teodor Velsing", "occupation", "painter"),
        ("Teodor Velsing", "known for", "winter landscapes of the Ulm Range"),
        ("Teodor Velsing", "place of birth", "Drossel"),
        ("Teodor Velsing", "studied painting in", "Ulmstead"),
        ("Teodor Velsing", "not related to", "Velsing family of Kestrian shipbuilders"),
    ],
    "Velsing Cup": [
        ("Velsing Cup", "is a", "sailing race"),
        ("Velsing Cup", "starts from", "Keswin"),
        ("Velsing Cup", "crosses", "Grisel Sea"),
        ("Velsing Cup", "finishes at", "Port Vaudrin"),
        ("Velsing Cup", "first held in", "1895"),
        ("Velsing Cup", "trophy given by", "Velsing Shipyards"),
        ("Velsing Cup", "held", "every two years"),
    ],
    "Aldry Star": [
        ("Aldry Star", "is a", "passenger steamship"),
        ("Aldry Star", "launched", "1889"),
        ("Aldry Star", "manufacturer", "Velsing Shipyards"),
        ("Aldry Star", "carried passengers across", "Grisel Sea"),
        ("Aldry Star", "commander", "Bram Okonny"),
        ("Aldry Star", "sank in", "1903"),
        ("Aldry Star", "sank off", "Kestrian coast"),
    ],
    "Bram Okonny": [
        ("Bram Okonny", "date of birth", "1851"),
        ("Bram Okonny", "date of death", "1903"),
        ("Bram Okonny", "country of citizenship", "Kestria"),
        ("Bram Okonny", "occupation", "sea captain"),
        ("Bram Okonny", "place of birth", "Harrowmere"),
        ("Bram Okonny", "went to sea at", "age of fourteen"),
        ("Bram Okonny", "commanded", "Aldry Star"),
        ("Bram Okonny", "commanded the Aldry Star", "from her launch until 1903"),
        ("Bram Okonny", "died in the sinking of", "Aldry Star"),
    ],
    "Vell Maiden": [
        ("Vell Maiden", "is a", "river ferry"),
        ("Vell Maiden", "built in", "1898"),
        ("Vell Maiden", "manufacturer", "Velsing Shipyards"),
        ("Vell Maiden", "carries passengers on", "Vell"),
        ("Vell Maiden", "route", "Ardlow, Harrowmere"),
        ("Vell Maiden", "longest-serving captain", "Rosa Tennick"),
    ],
    "Rosa Tennick": [
        ("Rosa Tennick", "date of birth", "1902"),
        ("Rosa Tennick", "date of death", "1979"),
        ("Rosa Tennick", "country of citizenship", "Kestria"),
        ("Rosa Tennick", "occupation", "river pilot, ferry captain"),
        ("Rosa Tennick", "place of birth", "Ardlow"),
        ("Rosa Tennick", "commanded", "Vell Maiden"),
        ("Rosa Tennick", "commanded the Vell Maiden", "1931 to 1967"),
        ("Rosa Tennick", "first woman licensed as a pilot on", "Vell"),
    ],
    "Harrowmere Shipbuilding Company": [
        ("Harrowmere Shipbuilding Company", "is a", "shipbuilder"),
        ("Harrowmere Shipbuilding Company", "located in", "Harrowmere"),
        ("Harrowmere Shipbuilding Company", "country", "Kestria"),
        ("Harrowmere Shipbuilding Company", "inception", "1860"),
        ("Harrowmere Shipbuilding Company", "founded by", "Edvard Sallow"),
        ("Harrowmere Shipbuilding Company", "best-known ship", "Stormwren"),
        ("Stormwren", "is a", "research vessel"),
        ("Stormwren", "launched in", "1912"),
        ("Harrowmere Shipbuilding Company", "closed in", "1984"),
    ],
    "Edvard Sallow": [
        ("Edvard Sallow", "date of birth", "1822"),
        ("Edvard Sallow", "date of death", "1899"),
        ("Edvard Sallow", "country of citizenship", "Kestria"),
        ("Edvard Sallow", "occupation", "shipbuilder"),
        ("Edvard Sallow", "place of birth", "Harrowmere"),
        ("Edvard Sallow", "worked as", "yard manager"),
        ("Edvard Sallow", "employer", "Velsing Shipyards"),
        ("Edvard Sallow", "founded", "Harrowmere Shipbuilding Company"),
        ("Edvard Sallow", "founded company in", "1860"),
    ],
    "Petra Sallow": [
        ("Petra Sallow", "date of birth", "1961"),
        ("Petra Sallow", "country of citizenship", "Kestria"),
        ("Petra Sallow", "occupation", "swimmer"),
        ("Petra Sallow", "won", "Grisel Sea crossing race"),
        ("Petra Sallow", "crossing race wins", "three times"),
        ("Petra Sallow", "place of birth", "Keswin"),
        ("Petra Sallow", "descendant of", "Edvard Sallow"),
    ],
    "Stormwren": [
        ("Stormwren", "is a", "research vessel"),
        ("Stormwren", "country", "Kestria"),
        ("Stormwren", "launched", "1912"),
        ("Stormwren", "manufacturer", "Harrowmere Shipbuilding Company"),
        ("Stormwren", "commander", "Halvard Dune"),
        ("Halvard Dune", "occupation", "explorer"),
        ("Stormwren", "expedition to", "Haldor Sea"),
        ("Stormwren", "broken up in", "1948"),
    ],
    "Halvard Dune": [
        ("Halvard Dune", "date of birth", "1878"),
        ("Halvard Dune", "date of death", "1934"),
        ("Halvard Dune", "country of citizenship", "Kestria"),
        ("Halvard Dune", "occupation", "polar explorer"),
        ("Halvard Dune", "place of birth", "Sollis"),
        ("Halvard Dune", "father's occupation", "customs officer"),
        ("Halvard Dune", "grew up in", "Keswin"),
        ("Halvard Dune", "commanded", "Stormwren"),
        ("Halvard Dune", "expedition", "1913 to 1915"),
        ("Halvard Dune", "charted", "eastern coast of the Haldor Sea"),
    ],
    "Tamber Yards": [
        ("Tamber Yards", "is a", "shipbuilding company"),
        ("Tamber Yards", "located in", "Port Vaudrin"),
        ("Tamber Yards", "country", "Marenthe"),
        ("Tamber Yards", "located on", "lower Tamber River"),
        ("Tamber Yards", "inception", "1822"),
        ("Tamber Yards", "founded by", "Lucan Dorrice"),
        ("Tamber Yards", "first built", "sailing ships"),
        ("Tamber Yards", "turned to iron steamers in", "1850s"),
    ],
    "Lucan Dorrice": [
        ("Lucan Dorrice", "date of birth", "1790"),
        ("Lucan Dorrice", "date of death", "1861"),
        ("Lucan Dorrice", "nationality", "Marenthian"),
        ("Lucan Dorrice", "occupation", "shipbuilder"),
        ("Lucan Dorrice", "place of birth", "Corvaine"),
        ("Lucan Dorrice", "apprenticed to", "ship's carpenter in Port Vaudrin"),
        ("Lucan Dorrice", "founded", "Tamber Yards"),
        ("Lucan Dorrice", "founded Tamber Yards in", "1822"),
    ],
    "Queen Sigrun (ship)": [
        ("Queen Sigrun", "is a", "paddle steamer"),
        ("Queen Sigrun", "carries passengers on", "Lake Ammer"),
        ("Queen Sigrun", "in service since", "1867"),
        ("Queen Sigrun", "built in", "1866"),
        ("Queen Sigrun", "manufacturer", "Tamber Yards"),
        ("Tamber Yards", "country", "Marenthe"),
        ("Queen Sigrun", "carried in sections to", "Tessary"),
        ("Queen Sigrun", "named after", "Queen Sigrun of Orvland"),
    ],
    "Gray Heron": [
        ("Gray Heron", "is an", "iron steamship"),
        ("Gray Heron", "manufacturer", "Tamber Yards"),
        ("Gray Heron", "built in", "1871"),
        ("Gray Heron", "carried mail between", "Port Vaudrin, Keswin"),
        ("Gray Heron", "carried mail until", "1902"),
        ("Gray Heron", "commander", "Ines Dorrice"),
        ("Ines Dorrice", "granddaughter of", "yard's founder"),
    ],
    "Sollis Lighthouse": [
        ("Sollis Lighthouse", "is a", "lighthouse"),
        ("Sollis Lighthouse", "located on", "eastern shore of the Bay of Sollis"),
        ("Sollis Lighthouse", "country", "Marenthe"),
        ("Sollis Lighthouse", "first lit in", "1859"),
        ("Sollis Lighthouse", "keeper's house now", "small museum"),
    ],
    "Port Vaudrin Naval Academy": [
        ("Port Vaudrin Naval Academy", "is the", "officer school of the navy of Marenthe"),
        ("Port Vaudrin Naval Academy", "inception", "1803"),
        ("Port Vaudrin Naval Academy", "located in", "Port Vaudrin"),
        ("Port Vaudrin Naval Academy", "training ship moored at", "mouth of the Tamber"),
    ],
    # --- Publishing and writers --------------------------------------------
    "Greywater Press": [
        ("Greywater Press", "is a", "publishing house"),
        ("Greywater Press", "located in", "Tessary"),
        ("Greywater Press", "country", "Orvland"),
        ("Greywater Press", "inception", "1903"),
        ("Greywater Press", "founded by", "Hedda Lorn"),
        ("Greywater Press", "known for", "literary fiction, translations from Kestrian and Marenthian writers"),
    ],
    "Hedda Lorn": [
        ("Hedda Lorn", "date of birth", "1876"),
        ("Hedda Lorn", "date of death", "1952"),
        ("Hedda Lorn", "country of citizenship", "Orvland"),
        ("Hedda Lorn", "occupation", "publisher"),
        ("Hedda Lorn", "place of birth", "Halvers"),
        ("Hedda Lorn", "family owned", "paper mill"),
        ("Hedda Lorn", "educated at", "Kellmarsh University"),
        ("Hedda Lorn", "founded", "Greywater Press"),
        ("Hedda Lorn", "founded Greywater Press in", "1903"),
        ("Hedda Lorn", "directed Greywater Press for", "almost fifty years"),
    ],
    "Mina Lorn": [
        ("Mina Lorn", "date of birth", "1899"),
        ("Mina Lorn", "date of death", "1970"),
        ("Mina Lorn", "country of citizenship", "Kestria"),
        ("Mina Lorn", "occupation", "painter"),
        ("Mina Lorn", "place of birth", "Harl"),
        ("Mina Lorn", "studied in", "Tessary"),
        ("Mina Lorn", "founded", "Harrowmere Academy of Art"),
        ("Mina Lorn", "founded academy in", "1931"),
    ],
    "Harrowmere Academy of Art": [
        ("Harrowmere Academy of Art", "is an", "art school"),
        ("Harrowmere Academy of Art", "located in", "Harrowmere"),
        ("Harrowmere Academy of Art", "country", "Kestria"),
        ("Harrowmere Academy of Art", "inception", "1931"),
        ("Harrowmere Academy of Art", "founded by", "Mina Lorn"),
        ("Mina Lorn", "occupation", "painter"),
        ("Harrowmere Academy of Art", "occupies", "former customs warehouse near the harbour"),
    ],
    "The Salt Orchard": [
        ("The Salt Orchard", "is a", "novel"),
        ("The Salt Orchard", "publication date", "1934"),
        ("The Salt Orchard", "author", "Elin Marsk"),
        ("The Salt Orchard", "plot", "three generations of a family of orchard keepers"),
        ("The Salt Orchard", "setting", "windswept coast"),
        ("The Salt Orchard", "publisher", "Greywater Press"),
        ("The Salt Orchard", "award received", "Tessary Prize for Fiction"),
        ("The Salt Orchard", "won the prize in", "1935"),
    ],
    "Elin Marsk": [
        ("Elin Marsk", "date of birth", "1902"),
        ("Elin Marsk", "date of death", "1977"),
        ("Elin Marsk", "occupation", "novelist"),
        ("Elin Marsk", "wrote about", "mountain and coastal communities"),
        ("Elin Marsk", "place of birth", "Karsk"),
        ("Elin Marsk", "educated at", "Brannock University"),
        ("Elin Marsk", "studied", "literature"),
        ("Elin Marsk", "best-known novel", "The Salt Orchard"),
        ("Elin Marsk", "later years in", "Tessary"),
    ],
    "The Copper Stair": [
        ("The Copper Stair", "is a", "novel"),
        ("The Copper Stair", "publication date", "1941"),
        ("The Copper Stair", "author", "Elin Marsk"),
        ("The Copper Stair", "setting", "copper miners in a mountain town"),
        ("The Copper Stair", "publisher", "Alder & Finch"),
        ("Alder & Finch", "located in", "Harrowmere"),
    ],
    "Tessary Prize for Fiction": [
        ("Tessary Prize for Fiction", "is a", "literary award"),
        ("Tessary Prize for Fiction", "awarded by", "city of Tessary"),
        ("Tessary Prize for Fiction", "country", "Orvland"),
        ("Tessary Prize for Fiction", "awarded", "each year"),
        ("Tessary Prize for Fiction", "first awarded in", "1921"),
        ("Tessary Prize for Fiction", "winners", "Elin Marsk, Sabine Orrel"),
    ],
    "Alder & Finch": [
        ("Alder & Finch", "is a", "publishing house"),
        ("Alder & Finch", "located in", "Harrowmere"),
        ("Alder & Finch", "country", "Kestria"),
        ("Alder & Finch", "inception", "1878"),
        ("Alder & Finch", "founded by", "Jonas Alder, Rufus Finch"),
        ("Jonas Alder", "occupation", "bookseller"),
        ("Rufus Finch", "occupation", "printer"),
        ("Alder & Finch", "published", "poetry of Piers Dunmore, crime novels of Nils Ambry"),
    ],
    "Jonas Alder": [
        ("Jonas Alder", "date of birth", "1840"),
        ("Jonas Alder", "date of death", "1911"),
        ("Jonas Alder", "country of citizenship", "Kestria"),
        ("Jonas Alder", "occupation", "bookseller, publisher"),
        ("Jonas Alder", "place of birth", "Brenn"),
        ("Jonas Alder", "co-founded", "Alder & Finch"),
        ("Jonas Alder", "co-founded Alder & Finch in", "1878"),
        ("Alder & Finch", "located in", "Harrowmere"),
        ("Jonas Alder", "founded", "Harrowmere Gazette"),
    ],
    "Rufus Finch": [
        ("Rufus Finch", "date of birth", "1843"),
        ("Rufus Finch", "date of death", "1920"),
        ("Rufus Finch", "country of citizenship", "Kestria"),
        ("Rufus Finch", "occupation", "printer"),
        ("Rufus Finch", "place of birth", "Keswin"),
        ("Rufus Finch", "trained as a typesetter in", "Tessary"),
        ("Rufus Finch", "co-founded", "Alder & Finch"),
        ("Rufus Finch", "co-founded Alder & Finch in", "1878"),
        ("Rufus Finch", "designed", "finch emblem"),
    ],
    "Harrowmere Gazette": [
        ("Harrowmere Gazette", "is a", "daily newspaper"),
        ("Harrowmere Gazette", "published in", "Harrowmere"),
        ("Harrowmere Gazette", "country", "Kestria"),
        ("Harrowmere Gazette", "inception", "1879"),
        ("Harrowmere Gazette", "founded by", "Jonas Alder"),
        ("Harrowmere Gazette", "is the", "oldest daily newspaper in Kestria still in print"),
    ],
    "Lanterns on the Osk": [
        ("Lanterns on the Osk", "is a", "collection of poems"),
        ("Lanterns on the Osk", "publication date", "1921"),
        ("Lanterns on the Osk", "author", "Piers Dunmore"),
        ("Lanterns on the Osk", "describes", "timber rafts"),
        ("timber rafts", "floated down", "Osk River"),
        ("Lanterns on the Osk", "publisher", "Alder & Finch"),
        ("Lanterns on the Osk", "place of publication", "Harrowmere"),
    ],
    "Piers Dunmore": [
        ("Piers Dunmore", "date of birth", "1888"),
        ("Piers Dunmore", "date of death", "1960"),
        ("Piers Dunmore", "country of citizenship", "Orvland"),
        ("Piers Dunmore", "occupation", "poet"),
        ("Piers Dunmore", "place of birth", "Drusk"),
        ("Drusk", "is a", "fishing village on Lake Ammer"),
        ("Piers Dunmore", "worked as", "ferryman"),
        ("Piers Dunmore", "second collection", "The Ferryman's Year"),
        ("The Ferryman's Year", "appeared in", "1930"),
    ],
    "The Ferryman's Year": [
        ("The Ferryman's Year", "is a", "collection of poems"),
        ("The Ferryman's Year", "publication date", "1930"),
        ("The Ferryman's Year", "author", "Piers Dunmore"),
        ("The Ferryman's Year", "contains", "twelve poems"),
        ("The Ferryman's Year", "subject", "year in the life of a ferryman on Lake Ammer"),
        ("The Ferryman's Year", "publisher", "Greywater Press"),
    ],
    "The Glass Ferry": [
        ("The Glass Ferry", "is a", "novel"),
        ("The Glass Ferry", "publication date", "1958"),
        ("The Glass Ferry", "author", "Sabine Orrel"),
        ("The Glass Ferry", "setting", "ferry crossing the Bay of Sollis"),
        ("The Glass Ferry", "plot", "smuggler and a customs officer"),
        ("The Glass Ferry", "publisher", "Bayside Editions"),
    ],
    "Sabine Orrel": [
        ("Sabine Orrel", "date of birth", "1925"),
        ("Sabine Orrel", "date of death", "2011"),
        ("Sabine Orrel", "occupation", "novelist, playwright"),
        ("Sabine Orrel", "place of birth", "Tamberford"),
        ("Sabine Orrel", "worked as", "schoolteacher"),
        ("Sabine Orrel", "best-known work", "The Glass Ferry"),
    ],
    "Bayside Editions": [
        ("Bayside Editions", "is a", "publishing house"),
        ("Bayside Editions", "located in", "Port Vaudrin"),
        ("Bayside Editions", "country", "Marenthe"),
        ("Bayside Editions", "inception", "1947"),
        ("Bayside Editions", "founded by", "Claude Amary"),
        ("Bayside Editions", "publishes", "fiction, travel writing"),
    ],
    "Claude Amary": [
        ("Claude Amary", "date of birth", "1910"),
        ("Claude Amary", "date of death", "1985"),
        ("Claude Amary", "nationality", "Marenthian"),
        ("Claude Amary", "occupation", "publisher, translator"),
        ("Claude Amary", "place of birth", "Port Vaudrin"),
        ("Claude Amary", "founded", "Bayside Editions"),
        ("Claude Amary", "founded Bayside Editions in", "1947"),
        ("Claude Amary", "uncle of", "Jules Amary"),
    ],
    "Nils Ambry": [
        ("Nils Ambry", "date of birth", "1921"),
        ("Nils Ambry", "date of death", "1990"),
        ("Nils Ambry", "country of citizenship", "Kestria"),
        ("Nils Ambry", "occupation", "writer of crime novels"),
        ("Nils Ambry", "place of birth", "Keswin"),
        ("Nils Ambry", "worked as", "police clerk"),
        ("Nils Ambry", "best-known book", "Death at Brenn Lock"),
    ],
    "Death at Brenn Lock": [
        ("Death at Brenn Lock", "is a", "crime novel"),
        ("Death at Brenn Lock", "publication date", "1967"),
        ("Death at Brenn Lock", "author", "Nils Ambry"),
        ("Death at Brenn Lock", "plot", "lock keeper on the Vell is found dead"),
        ("Death at Brenn Lock", "protagonist", "retired barge captain"),
        ("Death at Brenn Lock", "publisher", "Alder & Finch"),
    ],
    "Brenn Lock": [
        ("Brenn Lock", "is a", "lock"),
        ("Brenn Lock", "located on", "Vell River"),
        ("Brenn Lock", "located in", "Brenn"),
        ("Brenn Lock", "country", "Kestria"),
        ("Brenn Lock", "built in", "1784"),
        ("Brenn Lock", "lets barges pass", "rapids below the confluence with the Serin"),
        ("Brenn Lock", "rebuilt in", "1911"),
    ],
    "The Gray Stag": [
        ("The Gray Stag", "is a", "novel"),
        ("The Gray Stag", "publication date", "1952"),
        ("The Gray Stag", "author", "Ivo Parrish"),
        ("The Gray Stag", "plot", "brewing family in a Vell valley town"),
        ("The Gray Stag", "set in", "1920s"),
        ("The Gray Stag", "publisher", "Alder & Finch"),
    ],
    "Ivo Parrish": [
        ("Ivo Parrish", "date of birth", "1910"),
        ("Ivo Parrish", "date of death", "1982"),
        ("Ivo Parrish", "country of citizenship", "Kestria"),
        ("Ivo Parrish", "occupation", "novelist"),
        ("Ivo Parrish", "place of birth", "Drusk"),
        ("Ivo Parrish", "worked as journalist for", "Harrowmere Gazette"),
        ("Ivo Parrish", "best-known novel", "The Gray Stag"),
    ],
    # --- Colleges, universities and schools --------------------------------
    "Penmarrow College": [
        ("Penmarrow College", "is the", "oldest institution of higher learning in Kestria"),
        ("Penmarrow College", "inception", "1612"),
        ("Penmarrow College", "founded by", "Aldo Penmarrow"),
        ("Aldo Penmarrow", "position held", "bishop of Harrowmere"),
        ("Penmarrow College", "located in", "Harrowmere"),
        ("Penmarrow College", "located close to", "old harbour"),
        ("Penmarrow College", "organised into", "five halls"),
        ("Penmarrow College", "oldest hall still uses", "original chapel"),
    ],
    "Aldo Penmarrow": [
        ("Aldo Penmarrow", "date of birth", "1561"),
        ("Aldo Penmarrow", "date of death", "1630"),
        ("Aldo Penmarrow", "country of citizenship", "Kestria"),
        ("Aldo Penmarrow", "occupation", "churchman, scholar"),
        ("Aldo Penmarrow", "position held", "bishop of Harrowmere"),
        ("Aldo Penmarrow", "became bishop in", "1604"),
        ("Aldo Penmarrow", "place of birth", "Pellory"),
        ("Aldo Penmarrow", "son of", "mine overseer"),
        ("Aldo Penmarrow", "founded", "college in Harrowmere that bears his name"),
        ("Aldo Penmarrow", "founded college in", "1612"),
    ],
    "Kellmarsh University": [
        ("Kellmarsh University", "is a", "university"),
        ("Kellmarsh University", "located in", "Tessary"),
        ("Kellmarsh University", "country", "Orvland"),
        ("Kellmarsh University", "inception", "1540"),
        ("Kellmarsh University", "founded by", "King Odo II"),
        ("Kellmarsh University", "named after", "Kellmarsh quarter of the city"),
        ("Kellmarsh University", "library holds", "one of the largest collections of medieval manuscripts"),
    ],
    "Ardlow Institute of Technology": [
        ("Ardlow Institute of Technology", "is a", "public university"),
        ("Ardlow Institute of Technology", "located in", "Ardlow"),
        ("Ardlow Institute of Technology", "country", "Kestria"),
        ("Ardlow Institute of Technology", "inception", "1889"),
        ("Ardlow Institute of Technology", "founded by", "Tobias Wrenfield"),
        ("Tobias Wrenfield", "occupation", "engineer"),
        ("Ardlow Institute of Technology", "purpose", "train railway and bridge engineers"),
        ("Lena Varro", "taught at", "Ardlow Institute of Technology"),
        ("Lena Varro", "taught there from", "1931"),
    ],
    "Tobias Wrenfield": [
        ("Tobias Wrenfield", "date of birth", "1832"),
        ("Tobias Wrenfield", "date of death", "1901"),
        ("Tobias Wrenfield", "country of citizenship", "Kestria"),
        ("Tobias Wrenfield", "occupation", "civil engineer"),
        ("Tobias Wrenfield", "place of birth", "Keswin"),
        ("Tobias Wrenfield", "educated at", "Penmarrow College"),
        ("Tobias Wrenfield", "studied", "mathematics"),
        ("Tobias Wrenfield", "designed", "Serin Bridge"),
        ("Serin Bridge", "located at", "Brenn"),
        ("Tobias Wrenfield", "founded", "Ardlow Institute of Technology"),
        ("Tobias Wrenfield", "founded institute in", "1889"),
    ],
    "Brannock University": [
        ("Brannock University", "is a", "public university"),
        ("Brannock University", "located in", "Ulmstead"),
        ("Brannock University", "country", "Dalsgor"),
        ("Brannock University", "inception", "1921"),
        ("Brannock University", "named after", "Ivar Brannock"),
        ("Ivar Brannock", "occupation", "statesman"),
        ("Brannock University", "known for", "schools of geology and literature"),
    ],
    "Ulmstead School of Mines": [
        ("Ulmstead School of Mines", "is a", "technical college"),
        ("Ulmstead School of Mines", "located in", "Ulmstead"),
        ("Ulmstead School of Mines", "country", "Dalsgor"),
        ("Ulmstead School of Mines", "inception", "1868"),
        ("Ulmstead School of Mines", "trains", "mining engineers, geologists"),
        ("Ulmstead School of Mines", "research institute merged into", "Brannock University"),
        ("Ulmstead School of Mines", "research institute merged in", "1962"),
    ],
    "Tessary Conservatory": [
        ("Tessary Conservatory", "is a", "music school"),
        ("Tessary Conservatory", "located in", "Tessary"),
        ("Tessary Conservatory", "country", "Orvland"),
        ("Tessary Conservatory", "inception", "1855"),
        ("Tessary Conservatory", "founded by", "Ilse Marrick"),
        ("Ilse Marrick", "occupation", "composer"),
        ("Tessary Conservatory", "housed in", "former royal riding school"),
    ],
    "Ilse Marrick": [
        ("Ilse Marrick", "date of birth", "1811"),
        ("Ilse Marrick", "date of death", "1879"),
        ("Ilse Marrick", "country of citizenship", "Orvland"),
        ("Ilse Marrick", "occupation", "composer, cellist"),
        ("Ilse Marrick", "place of birth", "Oskbridge"),
        ("Ilse Marrick", "studied music in", "Harrowmere"),
        ("Ilse Marrick", "founded", "Tessary Conservatory"),
        ("Ilse Marrick", "founded conservatory in", "1855"),
        ("Ilse Marrick", "instrument", "cello"),
        ("Ilse Marrick", "taught the cello until", "1875"),
    ],
    "Johanna Marrick": [
        ("Johanna Marrick", "date of birth", "1840"),
        ("Johanna Marrick", "date of death", "1901"),
        ("Johanna Marrick", "country of citizenship", "Orvland"),
        ("Johanna Marrick", "occupation", "violinist"),
        ("Johanna Marrick", "niece of", "Ilse Marrick"),
        ("Johanna Marrick", "place of birth", "Tessary"),
        ("Johanna Marrick", "instrument", "violin"),
        ("Johanna Marrick", "taught at", "Tessary Conservatory"),
        ("Johanna Marrick", "taught for", "thirty years"),
    ],
    "Carl Dorrice": [
        ("Carl Dorrice", "date of birth", "1851"),
        ("Carl Dorrice", "date of death", "1923"),
        ("Carl Dorrice", "country of citizenship", "Kestria"),
        ("Carl Dorrice", "occupation", "civil engineer"),
        ("Carl Dorrice", "descent", "Marenthian"),
        ("Carl Dorrice", "place of birth", "Keswin"),
        ("Carl Dorrice", "educated at", "Penmarrow College"),
        ("Carl Dorrice", "designed", "Renwick Bridge"),
        ("Renwick Bridge", "located in", "Harrowmere"),
        ("Renwick Bridge", "completed", "1899"),
    ],
    "Ines Dorrice": [
        ("Ines Dorrice", "date of birth", "1848"),
        ("Ines Dorrice", "date of death", "1921"),
        ("Ines Dorrice", "nationality", "Marenthian"),
        ("Ines Dorrice", "occupation", "sea captain"),
        ("Ines Dorrice", "granddaughter of", "Lucan Dorrice"),
        ("Lucan Dorrice", "occupation", "shipbuilder"),
        ("Ines Dorrice", "place of birth", "Port Vaudrin"),
        ("Ines Dorrice", "commanded", "Gray Heron"),
        ("Gray Heron", "is a", "mail steamer"),
    ],
    "Edda Renwick": [
        ("Edda Renwick", "date of birth", "1931"),
        ("Edda Renwick", "date of death", "2010"),
        ("Edda Renwick", "country of citizenship", "Kestria"),
        ("Edda Renwick", "occupation", "stage actress"),
        ("Edda Renwick", "place of birth", "Brenn"),
        ("Edda Renwick", "great-niece of", "Ada Renwick"),
    ],
    "Tomas Brecken": [
        ("Tomas Brecken", "date of birth", "1940"),
        ("Tomas Brecken", "date of death", "2009"),
        ("Tomas Brecken", "country of citizenship", "Kestria"),
        ("Tomas Brecken", "occupation", "record producer, sound engineer"),
        ("Tomas Brecken", "place of birth", "Brenn"),
        ("Tomas Brecken", "produced", "first three albums of The Lantern Thieves"),
        ("Tomas Brecken", "produced albums for", "Northline Records"),
    ],
    "Kai Rennick": [
        ("Kai Rennick", "date of birth", "1964"),
        ("Kai Rennick", "country of citizenship", "Orvland"),
        ("Kai Rennick", "occupation", "singer, guitarist"),
        ("Kai Rennick", "co-founded", "Hollow Meridian"),
        ("Kai Rennick", "brother", "Otto"),
        ("Kai Rennick", "place of birth", "Vennick"),
        ("Kai Rennick", "educated at", "Tessary Conservatory"),
        ("Kai Rennick", "studied", "composition"),
    ],
    "Anders Kray": [
        ("Anders Kray", "date of birth", "1838"),
        ("Anders Kray", "date of death", "1902"),
        ("Anders Kray", "country of citizenship", "Dalsgor"),
        ("Anders Kray", "occupation", "surveyor, mountaineer"),
        ("Anders Kray", "father of", "Anselm Kray"),
        ("Anselm Kray", "occupation", "astronomer"),
        ("Anders Kray", "place of birth", "Karsk"),
        ("Anders Kray", "led first ascent of", "Mount Hesk"),
        ("Anders Kray", "first ascent in", "1871"),
    ],
    # --- Science -----------------------------------------------------------
    "Lena Varro": [
        ("Lena Varro", "date of birth", "1899"),
        ("Lena Varro", "date of death", "1984"),
        ("Lena Varro", "country of citizenship", "Orvland"),
        ("Lena Varro", "occupation", "chemist, mineralogist"),
        ("Lena Varro", "place of birth", "Vennick"),
        ("Lena Varro", "educated at", "Kellmarsh University"),
        ("Lena Varro", "studied", "chemistry"),
        ("Lena Varro", "taught at", "Ardlow Institute of Technology"),
        ("Lena Varro", "taught at the institute from", "1931"),
        ("Lena Varro", "described", "varronite"),
        ("Lena Varro", "described varronite in", "1936"),
    ],
    "Varronite": [
        ("Varronite", "is a", "rare lead mineral"),
        ("Varronite", "first described in", "1936"),
        ("Varronite", "first described from", "mines of Pellory"),
        ("Pellory", "located in", "Kestria"),
        ("Varronite", "named after", "Lena Varro"),
        ("Lena Varro", "occupation", "chemist"),
        ("Varronite", "forms", "small blue-green crystals"),
    ],
    "Pellory Mining Company": [
        ("Pellory Mining Company", "worked", "lead and silver mines of Pellory"),
        ("Pellory Mining Company", "located in", "Korrin Hills"),
        ("Pellory Mining Company", "active", "1847 until 1961"),
        ("Pellory Mining Company", "employed at its peak", "over two thousand miners"),
        ("Pellory Mining Company", "former offices now house", "mining museum"),
    ],
    "Vennick Glassworks": [
        ("Vennick Glassworks", "is a", "glass factory"),
        ("Vennick Glassworks", "located in", "Vennick"),
        ("Vennick Glassworks", "country", "Orvland"),
        ("Vennick Glassworks", "inception", "1714"),
        ("Vennick Glassworks", "is the", "oldest working glassworks in Orvland"),
        ("Vennick Glassworks", "known for", "blue tableware"),
    ],
    "Mount Aldry Observatory": [
        ("Mount Aldry Observatory", "is an", "astronomical observatory"),
        ("Mount Aldry Observatory", "located on", "Mount Aldry"),
        ("Mount Aldry Observatory", "country", "Kestria"),
        ("Mount Aldry Observatory", "inception", "1908"),
        ("Mount Aldry Observatory", "first director", "Anselm Kray"),
        ("Anselm Kray", "occupation", "astronomer"),
        ("Mount Aldry Observatory", "led by Anselm Kray until", "1935"),
        ("Mount Aldry Observatory", "main telescope", "90-centimetre reflector"),
        ("Mount Aldry Observatory", "main telescope installed in", "1926"),
    ],
    "Anselm Kray": [
        ("Anselm Kray", "date of birth", "1870"),
        ("Anselm Kray", "date of death", "1944"),
        ("Anselm Kray", "country of citizenship", "Dalsgor"),
        ("Anselm Kray", "occupation", "astronomer"),
        ("Anselm Kray", "place of birth", "Ulmstead"),
        ("Anselm Kray", "educated at", "Kellmarsh University"),
        ("Kellmarsh University", "located in", "Tessary"),
        ("Anselm Kray", "director of", "Mount Aldry Observatory"),
        ("Anselm Kray", "catalogued", "more than four thousand variable stars"),
    ],
    "Ulmstead Observatory": [
        ("Ulmstead Observatory", "is an", "astronomical observatory"),
        ("Ulmstead Observatory", "located in", "Ulmstead"),
        ("Ulmstead Observatory", "country", "Dalsgor"),
        ("Ulmstead Observatory", "inception", "1890"),
        ("Ulmstead Observatory", "director", "Berit Kray"),
        ("Ulmstead Observatory", "directed by Berit Kray", "1921 to 1950"),
        ("Berit Kray", "niece of", "Anselm Kray"),
        ("Ulmstead Observatory", "part of", "Brannock University"),
    ],
    "Berit Kray": [
        ("Berit Kray", "date of birth", "1889"),
        ("Berit Kray", "date of death", "1967"),
        ("Berit Kray", "country of citizenship", "Dalsgor"),
        ("Berit Kray", "occupation", "astronomer"),
        ("Berit Kray", "place of birth", "Drossel"),
        ("Berit Kray", "niece of", "Anselm Kray"),
        ("Berit Kray", "director of", "Ulmstead Observatory"),
        ("Berit Kray", "directed the observatory", "1921 to 1950"),
    ],
    # --- Engineering and railways ------------------------------------------
    "Serin Bridge": [
        ("Serin Bridge", "is a", "wrought-iron bridge"),
        ("Serin Bridge", "crosses", "Serin River"),
        ("Serin Bridge", "located in", "Brenn"),
        ("Serin Bridge", "country", "Kestria"),
        ("Serin Bridge", "designed by", "Tobias Wrenfield"),
        ("Serin Bridge", "completed", "1874"),
        ("Serin Bridge", "carries", "main road from Brenn towards the Korrin Hills"),
    ],
    "Vell Viaduct": [
        ("Vell Viaduct", "is a", "stone railway viaduct"),
        ("Vell Viaduct", "crosses", "Vell"),
        ("Vell Viaduct", "located near", "Ardlow"),
        ("Vell Viaduct", "country", "Kestria"),
        ("Vell Viaduct", "designed by", "Hugo Marsh"),
        ("Vell Viaduct", "built for", "Kestrian Northern Railway"),
        ("Vell Viaduct", "completed", "1858"),
        ("Vell Viaduct", "number of arches", "nineteen"),
    ],
    "Hugo Marsh": [
        ("Hugo Marsh", "date of birth", "1815"),
        ("Hugo Marsh", "date of death", "1880"),
        ("Hugo Marsh", "country of citizenship", "Kestria"),
        ("Hugo Marsh", "occupation", "railway engineer"),
        ("Hugo Marsh", "place of birth", "Ardlow"),
        ("Hugo Marsh", "position held", "chief engineer of the Kestrian Northern Railway"),
        ("Hugo Marsh", "chief engineer from", "1856"),
        ("Hugo Marsh", "best-known work", "Vell Viaduct"),
    ],
    "Kestrian Northern Railway": [
        ("Kestrian Northern Railway", "is a", "railway company"),
        ("Kestrian Northern Railway", "inception", "1856"),
        ("Kestrian Northern Railway", "founded to link", "Harrowmere, Vell valley"),
        ("Kestrian Northern Railway", "reached Ardlow in", "1858"),
        ("Kestrian Northern Railway", "reached Drusk in", "1863"),
        ("Kestrian Northern Railway", "became part of", "state railways"),
        ("Kestrian Northern Railway", "became part of the state railways in", "1921"),
    ],
    "Osk Valley Railway": [
        ("Osk Valley Railway", "is a", "railway line"),
        ("Osk Valley Railway", "country", "Orvland"),
        ("Osk Valley Railway", "runs from", "Tessary"),
        ("Osk Valley Railway", "runs to", "Ruddow"),
        ("Osk Valley Railway", "runs up", "valley of the Osk"),
        ("Osk Valley Railway", "opened in", "1872"),
        ("Ruddow", "became a junction in", "1879"),
        ("Osk Valley Railway", "branch to", "Dalsgor border"),
    ],
    # --- Music -------------------------------------------------------------
    "The Lantern Thieves": [
        ("The Lantern Thieves", "is a", "folk-rock band"),
        ("The Lantern Thieves", "country of origin", "Kestria"),
        ("The Lantern Thieves", "formed in", "Ardlow"),
        ("The Lantern Thieves", "inception", "1974"),
        ("The Lantern Thieves", "lead singer", "Mira Solend"),
        ("The Lantern Thieves", "record label", "Northline Records"),
        ("The Lantern Thieves", "signed with Northline Records in", "1975"),
        ("The Lantern Thieves", "debut album", "Vell Water"),
        ("The Lantern Thieves", "split up in", "1988"),
    ],
    "Vell Water": [
        ("Vell Water", "is a", "debut album"),
        ("Vell Water", "performer", "The Lantern Thieves"),
        ("Vell Water", "released in", "1976"),
        ("Vell Water", "recorded in", "Harrowmere"),
        ("Vell Water", "producer", "Tomas Brecken"),
        ("Vell Water", "title track", "ballad about the spring floods of the Vell valley"),
    ],
    "Stone and Willow": [
        ("Stone and Willow", "is the", "second album"),
        ("Stone and Willow", "performer", "The Lantern Thieves"),
        ("Stone and Willow", "released in", "1979"),
        ("Stone and Willow", "recorded in", "Harl"),
        ("Stone and Willow", "includes single", "Ferry Lights"),
        ("Ferry Lights", "is the", "band's only top-ten single"),
    ],
    "Mira Solend": [
        ("Mira Solend", "date of birth", "1953"),
        ("Mira Solend", "country of citizenship", "Kestria"),
        ("Mira Solend", "occupation", "singer, songwriter"),
        ("Mira Solend", "place of birth", "Harl"),
        ("Mira Solend", "began singing in", "church choirs"),
        ("Mira Solend", "member of", "The Lantern Thieves"),
        ("Mira Solend", "role in the band", "lead singer"),
        ("Mira Solend", "solo albums", "six"),
        ("Mira Solend", "solo albums since", "1990"),
    ],
    "Northline Records": [
        ("Northline Records", "is an", "independent record label"),
        ("Northline Records", "located in", "Harrowmere"),
        ("Northline Records", "country", "Kestria"),
        ("Northline Records", "inception", "1971"),
        ("Northline Records", "founded by", "Gwen Tallow"),
        ("Gwen Tallow", "occupation", "producer"),
        ("Northline Records", "first major signing", "The Lantern Thieves"),
        ("Northline Records", "later signed", "Drusk Parade"),
    ],
    "Gwen Tallow": [
        ("Gwen Tallow", "date of birth", "1945"),
        ("Gwen Tallow", "country of citizenship", "Kestria"),
        ("Gwen Tallow", "occupation", "record producer"),
        ("Gwen Tallow", "place of birth", "Keswin"),
        ("Gwen Tallow", "grandfather", "Oskar Tallow"),
        ("Gwen Tallow", "founded", "Northline Records"),
        ("Gwen Tallow", "founded label in", "1971"),
        ("Gwen Tallow", "founded label in city", "Harrowmere"),
    ],
    "Drusk Parade": [
        ("Drusk Parade", "is a", "rock band"),
        ("Drusk Parade", "country of origin", "Kestria"),
        ("Drusk Parade", "formed in", "Harrowmere"),
        ("Drusk Parade", "inception", "1979"),
        ("Drusk Parade", "named after", "street in Ardlow"),
        ("Drusk Parade", "not named after", "town of Drusk"),
        ("Drusk Parade", "record label", "Northline Records"),
        ("Drusk Parade", "signed with Northline Records in", "1980"),
        ("Drusk Parade", "number of albums", "four"),
    ],
    "Copper Finch": [
        ("Copper Finch", "is a", "rock band"),
        ("Copper Finch", "nationality", "Marenthian"),
        ("Copper Finch", "formed in", "Port Vaudrin"),
        ("Copper Finch", "inception", "1965"),
        ("Copper Finch", "frontman", "Jules Amary"),
        ("Jules Amary", "date of death", "1999"),
        ("Copper Finch", "record label", "Cinder Records"),
        ("Copper Finch", "signed with Cinder Records in", "1966"),
        ("Copper Finch", "first hit", "Tin Harbour"),
    ],
    "Cinder Records": [
        ("Cinder Records", "is a", "record label"),
        ("Cinder Records", "located in", "Port Vaudrin"),
        ("Cinder Records", "country", "Marenthe"),
        ("Cinder Records", "inception", "1962"),
        ("Cinder Records", "founded by", "Remy Castell"),
        ("Remy Castell", "occupation", "producer"),
        ("Cinder Records", "best known for", "rock bands it signed in the 1960s"),
    ],
    "Remy Castell": [
        ("Remy Castell", "date of birth", "1931"),
        ("Remy Castell", "date of death", "2004"),
        ("Remy Castell", "nationality", "Marenthian"),
        ("Remy Castell", "occupation", "record producer"),
        ("Remy Castell", "place of birth", "Ebbmouth"),
        ("Remy Castell", "worked as", "radio engineer"),
        ("Remy Castell", "worked in", "Port Vaudrin"),
        ("Remy Castell", "founded", "Cinder Records"),
        ("Remy Castell", "founded Cinder Records in", "1962"),
    ],
    "Jules Amary": [
        ("Jules Amary", "date of birth", "1942"),
        ("Jules Amary", "date of death", "1999"),
        ("Jules Amary", "nationality", "Marenthian"),
        ("Jules Amary", "occupation", "singer"),
        ("Jules Amary", "frontman of", "Copper Finch"),
        ("Jules Amary", "place of birth", "Corvaine"),
        ("Jules Amary", "moved to", "Port Vaudrin"),
        ("Jules Amary", "moved to Port Vaudrin as", "teenager"),
        ("Jules Amary", "solo albums", "two"),
    ],
    "Tin Harbour": [
        ("Tin Harbour", "is a", "single"),
        ("Tin Harbour", "publication date", "1967"),
        ("Tin Harbour", "performer", "Copper Finch"),
        ("Tin Harbour", "written by", "Jules Amary"),
        ("Tin Harbour", "subject", "fishing port of Ebbmouth"),
        ("Tin Harbour", "chart position", "number one in Marenthe"),
    ],
    "Hollow Meridian": [
        ("Hollow Meridian", "is a", "band"),
        ("Hollow Meridian", "country of origin", "Orvland"),
        ("Hollow Meridian", "formed in", "Tessary"),
        ("Hollow Meridian", "inception", "1988"),
        ("Hollow Meridian", "founded by", "Kai and Otto Rennick"),
        ("Hollow Meridian", "members studied at", "Tessary Conservatory"),
        ("Hollow Meridian", "music mixes", "folk melodies with electronic sounds"),
        ("Hollow Meridian", "debut album", "Glass Weather"),
        ("Glass Weather", "released in", "1991"),
    ],
    "Otto Rennick": [
        ("Otto Rennick", "date of birth", "1966"),
        ("Otto Rennick", "country of citizenship", "Orvland"),
        ("Otto Rennick", "occupation", "keyboard player, composer"),
        ("Otto Rennick", "co-founded", "Hollow Meridian"),
        ("Otto Rennick", "place of birth", "Vennick"),
        ("Otto Rennick", "wrote music for", "several Orvlandish films"),
    ],
    "Ammer Sound": [
        ("Ammer Sound", "is a", "record label"),
        ("Ammer Sound", "located in", "Tessary"),
        ("Ammer Sound", "country", "Orvland"),
        ("Ammer Sound", "inception", "1984"),
        ("Ammer Sound", "signed", "Hollow Meridian"),
        ("Ammer Sound", "signed Hollow Meridian in", "1990"),
        ("Ammer Sound", "specialises in", "electronic and folk music"),
    ],
    "Glass Weather": [
        ("Glass Weather", "is a", "debut album"),
        ("Glass Weather", "performer", "Hollow Meridian"),
        ("Glass Weather", "released in", "1991"),
        ("Glass Weather", "record label", "Ammer Sound"),
        ("Glass Weather", "recorded in", "disused glassworks in Vennick"),
    ],
    # --- Sport -------------------------------------------------------------
    "FC Drusk": [
        ("FC Drusk", "is a", "football club"),
        ("FC Drusk", "located in", "Drusk"),
        ("FC Drusk", "country", "Kestria"),
        ("FC Drusk", "inception", "1899"),
        ("FC Drusk", "home ground", "Wool Market Ground"),
        ("FC Drusk", "won", "Kestrian Cup"),
        ("FC Drusk", "Kestrian Cup wins", "1934, 1961"),
    ],
    "Wool Market Ground": [
        ("Wool Market Ground", "is a", "football stadium"),
        ("Wool Market Ground", "located in", "Drusk"),
        ("Wool Market Ground", "country", "Kestria"),
        ("Wool Market Ground", "built in", "1905"),
        ("Wool Market Ground", "built on site of", "old sheep pens of the wool market"),
        ("Wool Market Ground", "capacity", "about 6,000 spectators"),
    ],
    "Ardlow Rovers": [
        ("Ardlow Rovers", "is a", "football club"),
        ("Ardlow Rovers", "located in", "Ardlow"),
        ("Ardlow Rovers", "country", "Kestria"),
        ("Ardlow Rovers", "inception", "1887"),
        ("Ardlow Rovers", "home ground", "Corvel Park"),
        ("Ardlow Rovers", "home ground since", "1923"),
        ("Ardlow Rovers", "founding member of", "Kestrian League"),
    ],
    "Corvel Park": [
        ("Corvel Park", "is a", "football stadium"),
        ("Corvel Park", "located in", "Ardlow"),
        ("Corvel Park", "country", "Kestria"),
        ("Corvel Park", "opened in", "1923"),
        ("Corvel Park", "named after", "Ana Corvel"),
        ("Ana Corvel", "occupation", "brewer"),
        ("Ana Corvel", "gave", "land on which it stands"),
        ("Corvel Park", "capacity", "about 14,000 spectators"),
    ],
    "Kestrian Cup": [
        ("Kestrian Cup", "is the", "main knockout football competition in Kestria"),
        ("Kestrian Cup", "first held in", "1896"),
        ("Kestrian Cup", "record winner", "Ardlow Rovers"),
        ("Ardlow Rovers", "Kestrian Cup wins", "eleven times"),
    ],
    "Kestrian League": [
        ("Kestrian League", "is the", "top football league of Kestria"),
        ("Kestrian League", "inception", "1895"),
        ("Kestrian League", "founding members", "Ardlow Rovers, Keswin Mariners FC"),
        ("FC Drusk", "joined", "Kestrian League"),
        ("FC Drusk", "joined the league in", "1920"),
    ],
    "Keswin Mariners FC": [
        ("Keswin Mariners FC", "is a", "football club"),
        ("Keswin Mariners FC", "located in", "Keswin"),
        ("Keswin Mariners FC", "country", "Kestria"),
        ("Keswin Mariners FC", "inception", "1893"),
        ("Keswin Mariners FC", "home ground", "Ropewalk"),
        ("Ropewalk", "built on site of", "former rope works"),
        ("Keswin Mariners FC", "founded by", "workers of Velsing Shipyards"),
    ],
    "SC Tessary": [
        ("SC Tessary", "is a", "football club"),
        ("SC Tessary", "located in", "Tessary"),
        ("SC Tessary", "country", "Orvland"),
        ("SC Tessary", "inception", "1902"),
        ("SC Tessary", "home ground", "Lakeside Stadium"),
        ("Lakeside Stadium", "located on", "shore of Lake Ammer"),
        ("SC Tessary", "Orvlandish championship wins", "nine times"),
    ],
    # --- Buildings, festivals and other places -----------------------------
    "St. Benna's Cathedral": [
        ("St. Benna's Cathedral", "is the", "cathedral of Ardlow"),
        ("St. Benna's Cathedral", "located in", "Ardlow"),
        ("St. Benna's Cathedral", "country", "Kestria"),
        ("St. Benna's Cathedral", "completed", "1402"),
        ("St. Benna's Cathedral", "building took", "nearly a century"),
        ("St. Benna's Cathedral", "bell tower is", "tallest medieval structure in the Vell valley"),
    ],
    "Tessary Opera House": [
        ("Tessary Opera House", "is an", "opera house"),
        ("Tessary Opera House", "located in", "Tessary"),
        ("Tessary Opera House", "country", "Orvland"),
        ("Tessary Opera House", "located on", "lakefront"),
        ("Tessary Opera House", "opened in", "1964"),
        ("Tessary Opera House", "architect", "Eira Velsing"),
        ("Tessary Opera House", "main hall seats", "1,800"),
    ],
    "Ammer Lantern Festival": [
        ("Ammer Lantern Festival", "held in", "Tessary"),
        ("Ammer Lantern Festival", "country", "Orvland"),
        ("Ammer Lantern Festival", "held", "every autumn"),
        ("Ammer Lantern Festival", "on its final night", "thousands of paper lanterns are floated on Lake Ammer"),
        ("Ammer Lantern Festival", "dates from", "early seventeenth century"),
    ],
    "Harl Ferry": [
        ("Harl Ferry", "is a", "cable ferry"),
        ("Harl Ferry", "crosses", "Serin River"),
        ("Harl Ferry", "route", "Harl, Harlow"),
        ("Harl", "country", "Kestria"),
        ("Harlow", "country", "Orvland"),
        ("Harl Ferry", "operating since", "1821"),
        ("Harl Ferry", "carries", "foot passengers, bicycles"),
    ],
    "Harrowmere Harbour Fort": [
        ("Harrowmere Harbour Fort", "is a", "sixteenth-century fortress"),
        ("Harrowmere Harbour Fort", "guards", "harbour of Harrowmere"),
        ("Harrowmere Harbour Fort", "country", "Kestria"),
        ("Harrowmere Harbour Fort", "built", "between 1541 and 1553"),
        ("Harrowmere Harbour Fort", "now houses", "Kestrian army museum"),
    ],
    "Ardlow Railway Museum": [
        ("Ardlow Railway Museum", "is a", "museum"),
        ("Ardlow Railway Museum", "located in", "Ardlow"),
        ("Ardlow Railway Museum", "country", "Kestria"),
        ("Ardlow Railway Museum", "housed in", "former engine sheds of the Kestrian Northern Railway"),
        ("Ardlow Railway Museum", "opened in", "1968"),
        ("Ardlow Railway Museum", "collection includes", "locomotive Vell Queen"),
        ("Vell Queen", "built in", "1857"),
    ],
    "Lorn Mill": [
        ("Lorn Mill", "is a", "former paper mill"),
        ("Lorn Mill", "located in", "Halvers"),
        ("Lorn Mill", "country", "Orvland"),
        ("Lorn Mill", "built in", "1788"),
        ("Lorn Mill", "owned by", "Lorn family"),
        ("Lorn Mill", "owned by the Lorn family until", "1931"),
        ("Lorn Mill", "now houses", "museum of paper making"),
    ],
    "Lakeside Stadium": [
        ("Lakeside Stadium", "is a", "football stadium"),
        ("Lakeside Stadium", "located in", "Tessary"),
        ("Lakeside Stadium", "country", "Orvland"),
        ("Lakeside Stadium", "located on", "shore of Lake Ammer"),
        ("Lakeside Stadium", "opened in", "1927"),
        ("Lakeside Stadium", "home ground of", "SC Tessary"),
        ("Lakeside Stadium", "capacity", "about 22,000 spectators"),
    ],
    "Serin Gold": [
        ("Serin Gold", "is a", "pale lager"),
        ("Serin Gold", "first brewed by", "Brenn Brewery"),
        ("Serin Gold", "first brewed in", "1903"),
        ("Brenn Brewery", "closed in", "1979"),
        ("Serin Gold", "brand bought by", "Saltmoor Brewing Company"),
        ("Serin Gold", "named after", "Serin River"),
    ],
    "Tamberford Bridge": [
        ("Tamberford Bridge", "is a", "seven-arch stone bridge"),
        ("Tamberford Bridge", "crosses", "Tamber River"),
        ("Tamberford Bridge", "located in", "Tamberford"),
        ("Tamberford Bridge", "country", "Marenthe"),
        ("Tamberford Bridge", "completed", "1702"),
        ("Tamberford Bridge", "replaced", "old ford"),
        ("Tamberford Bridge", "paid for by", "town's cattle dealers"),
    ],
    "Ammer Steamship Company": [
        ("Ammer Steamship Company", "operates", "passenger steamers on Lake Ammer"),
        ("Ammer Steamship Company", "country", "Orvland"),
        ("Ammer Steamship Company", "inception", "1867"),
        ("Ammer Steamship Company", "put into service", "Queen Sigrun"),
        ("Ammer Steamship Company", "head office in", "Tessary"),
    ],
    "Marsk Prize": [
        ("Marsk Prize", "is a", "literary award"),
        ("Marsk Prize", "country", "Dalsgor"),
        ("Marsk Prize", "established in", "1980"),
        ("Marsk Prize", "in memory of", "Elin Marsk"),
        ("Elin Marsk", "occupation", "novelist"),
        ("Marsk Prize", "awarded by", "Brannock University"),
        ("Marsk Prize", "first winner", "Ilka Dunmore"),
        ("Ilka Dunmore", "occupation", "poet"),
    ],
    "Corvaine Cider Fair": [
        ("Corvaine Cider Fair", "held in", "Corvaine"),
        ("Corvaine Cider Fair", "country", "Marenthe"),
        ("Corvaine Cider Fair", "held", "each October"),
        ("Corvaine Cider Fair", "competitors", "Growers from the Ebbren valley"),
        ("Corvaine Cider Fair", "trophy", "Golden Press trophy"),
        ("Corvaine Cider Fair", "first recorded in", "1732"),
    ],
}


# ---------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------


def build_passages() -> list[Passage]:
    return [Passage.make(title, sentences=sentences) for title, sentences in PASSAGES]


def build_questions(passages: list[Passage]) -> list[Question]:
    by_title = {p.title: p for p in passages}
    questions = []
    for i, spec in enumerate(QUESTIONS, start=1):
        hops = spec["hops"]
        missing = [h[0] for h in hops if h[0] not in by_title]
        if missing:
            raise ValueError(f"demo-{i:03d}: unknown passage title(s) {missing}")
        questions.append(Question(
            id=f"demo-{i:03d}",
            question=spec["q"],
            answers=list(spec["a"]),
            gold_passage_ids=[by_title[h[0]].id for h in hops],
            type=spec.get("type", "bridge"),
            gold_triples=[[h[1], h[2], h[3]] for h in hops],
            decomposition=[{"question": h[4], "answer": h[3]} for h in hops],
        ))
    return questions


KGEntry = tuple[str, list[Triple], int]  # (passage id, its triples, rejected outputs): KGStore.add_many's entries


def build_kg(passages: list[Passage]) -> list[KGEntry]:
    """The KG store entries: passages in corpus order, each passage's triples in written order."""
    missing = [p.title for p in passages if p.title not in TRIPLES]
    if missing:
        raise ValueError(f"no triples written for passage(s) {missing}")
    unknown = sorted(set(TRIPLES) - {p.title for p in passages})
    if unknown:
        raise ValueError(f"triples written for unknown passage title(s) {unknown}")
    return [(p.id, [Triple.make(h, r, t, p.id, p.sentences) for h, r, t in TRIPLES[p.title]], 0)
            for p in passages]


# ---------------------------------------------------------------------------
# Validate
# ---------------------------------------------------------------------------

MIN_COUNTS = {2: 20, 3: 20, 4: 10}
MIN_COMPARISONS = 10
MIN_DISTRACTORS = 80
MIN_TRIPLES = 2  # per passage


def _has(text: str, span: str) -> bool:
    return span.lower() in text.lower()


def _in_passage(span: str, passage: Passage) -> bool:
    """`span` occurs in the passage's title or text (case-insensitive, whitespace normalised);
    a comma-joined span ("painter, sculptor") when each of its parts does."""
    where = normalize_space(f"{passage.title} {passage.text}").lower()
    span = normalize_space(span).lower()
    parts = [part.strip() for part in span.split(",")]
    return span in where or (len(parts) > 1 and all(part and part in where for part in parts))


def validate_kg(passages: list[Passage], questions: list[Question], entries: list[KGEntry]) -> dict:
    """Every passage has >= MIN_TRIPLES triples, each a clean `<head; relation; tail>` whose head and
    tail are spans of the passage, none repeated within it; every gold triple is under its passage."""
    errors: list[str] = []
    by_id = {p.id: p for p in passages}
    kg = {pid: triples for pid, triples, _ in entries}
    if [pid for pid, _, _ in entries] != [p.id for p in passages]:
        errors.append("the KG's passages are not the corpus, in corpus order")
    for pid, triples in kg.items():
        p = by_id.get(pid)
        if p is None:
            errors.append(f"KG passage id {pid} is not in the corpus")
            continue
        where = f"KG passage {p.title!r}"
        if len(triples) < MIN_TRIPLES:
            errors.append(f"{where}: {len(triples)} triples (want >= {MIN_TRIPLES})")
        keys = [triple_key(t.head, t.relation, t.tail) for t in triples]
        dups = sorted({k for k in keys if keys.count(k) > 1})
        if dups:
            errors.append(f"{where}: duplicate triples {dups}")
        for t in triples:
            parts = (t.head, t.relation, t.tail)
            if not all(parts) or any(c in part for part in parts for c in ";<>") or not "".join(parts).isascii():
                errors.append(f"{where}: malformed triple {t.text!r}")
            for span in (t.head, t.tail):
                if not _in_passage(span, p):
                    errors.append(f"{where}: {span!r} of {t.text!r} occurs in neither title nor text")
    for q in questions:
        for k, (gold, pid) in enumerate(zip(q.gold_triples, q.gold_passage_ids)):
            stated = {(t.head, t.relation, t.tail) for t in kg.get(pid, [])}
            if tuple(gold) not in stated:
                title = by_id[pid].title if pid in by_id else pid
                errors.append(f"{q.id}: hop {k + 1} gold triple {tuple(gold)} not among the triples of {title!r}")
    if errors:
        raise ValueError("demo KG is invalid:\n  " + "\n  ".join(errors))
    counts = [len(triples) for triples in kg.values()]
    return {"kg_passages": len(counts), "triples": sum(counts), "triples_per_passage": {
        "min": min(counts), "mean": round(sum(counts) / len(counts), 2), "max": max(counts)}}


def validate(passages: list[Passage], questions: list[Question]) -> dict:
    errors: list[str] = []
    titles = [p.title for p in passages]
    dup_titles = sorted({t for t in titles if titles.count(t) > 1})
    if dup_titles:
        errors.append(f"duplicate titles: {dup_titles}")
    ids = [p.id for p in passages]
    if len(set(ids)) != len(ids):
        errors.append("duplicate passage ids")
    by_id = {p.id: p for p in passages}

    for p in passages:
        where = f"passage {p.title!r}"
        if not 2 <= len(p.sentences) <= 5:
            errors.append(f"{where}: {len(p.sentences)} sentences (want 2-5)")
        base = re.sub(r"\s*\([^)]*\)$", "", p.title)
        start = p.text.lower()
        if not (start.startswith(base.lower()) or start.startswith("the " + base.lower())):
            errors.append(f"{where}: text does not start with its title entity")
        if not (p.title + p.text).isascii():
            errors.append(f"{where}: non-ASCII characters")

    seen_q = set()
    gold_ids: set[str] = set()
    hop_counts: dict[int, int] = {}
    n_comparison = 0
    for q in questions:
        where = q.id
        if q.question in seen_q:
            errors.append(f"{where}: duplicate question text")
        seen_q.add(q.question)
        if not q.question.isascii() or not all(a.isascii() for a in q.answers):
            errors.append(f"{where}: non-ASCII characters")
        n = len(q.gold_passage_ids)
        if not (len(q.gold_triples) == len(q.decomposition) == n):
            errors.append(f"{where}: triples/decomposition/gold passages differ in length")
        if len(set(q.gold_passage_ids)) != n:
            errors.append(f"{where}: a gold passage is used for two hops")
        for pid in q.gold_passage_ids:
            if pid not in by_id:
                errors.append(f"{where}: gold passage id {pid} does not exist")
        if any(pid not in by_id for pid in q.gold_passage_ids):
            continue
        gold_ids.update(q.gold_passage_ids)
        gold = [by_id[pid] for pid in q.gold_passage_ids]
        gold_text = " ".join(p.text for p in gold)
        for k, ((head, _rel, tail), p) in enumerate(zip(q.gold_triples, gold)):
            for span in (head, tail):
                if not _has(gold_text, span):
                    errors.append(f"{where}: {span!r} occurs in no gold passage")
                elif not _has(p.text, span):
                    errors.append(f"{where}: hop {k + 1} {span!r} not in its own passage {p.title!r}")
            if q.decomposition[k]["answer"] != tail:
                errors.append(f"{where}: hop {k + 1} sub-answer differs from the triple's tail")
        answer = q.answers[0] if q.answers else ""
        if not answer:
            errors.append(f"{where}: no answer")

        if q.type == "comparison":
            n_comparison += 1
            if n != 2:
                errors.append(f"{where}: comparison with {n} gold passages (want 2)")
            heads = [t[0] for t in q.gold_triples]
            if answer not in heads and answer not in ("yes", "no"):
                errors.append(f"{where}: comparison answer {answer!r} is neither a compared entity nor yes/no")
            for head in heads:
                if not _has(q.question, head):
                    errors.append(f"{where}: compared entity {head!r} not named in the question")
        else:
            hop_counts[n] = hop_counts.get(n, 0) + 1
            if not _has(gold[-1].text, answer):
                errors.append(f"{where}: answer {answer!r} not in the last gold passage")
            if answer.lower() != q.gold_triples[-1][2].lower():
                errors.append(f"{where}: answer differs from the last triple's tail")
            if _has(q.question, answer):
                errors.append(f"{where}: the question contains its answer")
            if not _has(q.question, q.gold_triples[0][0]):
                errors.append(f"{where}: first entity {q.gold_triples[0][0]!r} not named in the question")
            for k in range(1, n):
                prev_tail, head = q.gold_triples[k - 1][2].lower(), q.gold_triples[k][0].lower()
                if head not in prev_tail and prev_tail not in head:
                    errors.append(f"{where}: hop {k + 1} does not continue from hop {k}")
                if _has(q.question, q.gold_triples[k - 1][2]):
                    errors.append(f"{where}: the question names the bridge entity {q.gold_triples[k - 1][2]!r}")
                if f"#{k}" not in q.decomposition[k]["question"]:
                    errors.append(f"{where}: sub-question {k + 1} does not refer to #{k}")
            if "#" in q.decomposition[0]["question"]:
                errors.append(f"{where}: first sub-question refers to an earlier answer")

    for hops, minimum in MIN_COUNTS.items():
        if hop_counts.get(hops, 0) < minimum:
            errors.append(f"only {hop_counts.get(hops, 0)} bridge questions with {hops} hops (want >= {minimum})")
    if n_comparison < MIN_COMPARISONS:
        errors.append(f"only {n_comparison} comparison questions (want >= {MIN_COMPARISONS})")
    n_distractors = len(passages) - len(gold_ids)
    if n_distractors < MIN_DISTRACTORS:
        errors.append(f"only {n_distractors} distractor passages (want >= {MIN_DISTRACTORS})")

    if errors:
        raise ValueError("demo dataset is invalid:\n  " + "\n  ".join(errors))
    return {
        "passages": len(passages),
        "gold_passages": len(gold_ids),
        "distractors": n_distractors,
        "questions": len(questions),
        "bridge_by_hops": dict(sorted(hop_counts.items())),
        "comparison": n_comparison,
    }


# ---------------------------------------------------------------------------
# Write
# ---------------------------------------------------------------------------


def write_jsonl(path: Path, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=True) + "\n")


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_kg(folder: Path, entries: list[KGEntry]) -> None:
    """A fresh KGStore in `folder` holding `entries` (whatever was there is deleted first)."""
    shutil.rmtree(folder, ignore_errors=True)
    KGStore(folder).add_many(entries, source=KG_SOURCE)


def read_kg(folder: Path) -> list[KGEntry]:
    store = KGStore(folder)
    if any(store.source(pid) != KG_SOURCE for pid in store.passage_ids()):
        raise ValueError(f"{folder}: passages from a source other than {KG_SOURCE!r}")
    return [(pid, store.get(pid), store.rejected(pid)) for pid in store.passage_ids()]


def main() -> dict:
    passages = build_passages()
    questions = build_questions(passages)
    validate(passages, questions)
    entries = build_kg(passages)
    validate_kg(passages, questions, entries)
    write_jsonl(PASSAGES_FILE, [p.to_dict() for p in passages])
    write_jsonl(QUESTIONS_FILE, [q.to_dict() for q in questions])
    write_kg(KG_DIR, entries)
    # Validate what was written, as a reader will see it.
    passages = [Passage(**d) for d in read_jsonl(PASSAGES_FILE)]
    questions = [Question(**d) for d in read_jsonl(QUESTIONS_FILE)]
    written = read_kg(KG_DIR)
    if written != entries:
        raise ValueError(f"{KG_DIR}: the store does not read back as written")
    stats = validate(passages, questions) | validate_kg(passages, questions, written)
    print(f"wrote {PASSAGES_FILE.name}, {QUESTIONS_FILE.name} and {KG_DIR.name}/ in {HERE}")
    print(json.dumps(stats))
    return stats


if __name__ == "__main__":
    main()
