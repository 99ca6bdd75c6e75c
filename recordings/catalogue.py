"""Make the store's stand-in catalogue: ``data/products.csv.gz``.

The real catalogue behind the course is Wayfair's WANDS ``dataset/product.csv``, which these machines
cannot download. This script writes a catalogue of its own in exactly that format (tab-separated, the
same nine columns, gzip-compressed), from a fixed seed, so every run writes the same bytes:

    python recordings/catalogue.py                 # 43,000 products, seed 2026 -> data/products.csv.gz
    python recordings/catalogue.py --products 500 --seed 7 --output /tmp/small.csv.gz

``generate(n_products, seed)`` returns the same table as a pandas DataFrame, for tests.

How the text is built
---------------------
* A product belongs to one of 210 product classes (``CLASS_TABLE``), each in one of 20 families of classes that
  share description templates (``FAMILIES``); a template can be tagged with the words of the products it fits.
* Its name is lowercase: optional collection, size or count, style, colour, material, the product type and
  an optional suffix, e.g. ``mid-century modern walnut 3 drawer nightstand``.
* Its description is one to eight sentences: an opener, body sentences, sometimes a closer. In about two
  thirds of described products a later sentence repeats the end of the product's own name,
  ``... this <adjective> <the name's last 2-4 words> is ...``, the way catalogue copy does. The word that
  follows such a phrase is therefore decided by the name, and where the copied run reaches the end of the
  name the sentence goes on with an ordinary word (``is``, ``will``, ``.``).
* The chapter's example, ``double chaise patio furniture cover``, is placed at a validation id (see
  ``lib.store.split_of``) among the first 300 validation products.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import random
import re
import sys
import zlib
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib.store import WANDS_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "data" / "products.csv.gz"
N_PRODUCTS = 43_000
SEED = 2026


CHAPTER_NAME = "double chaise patio furniture cover"
CHAPTER_DESCRIPTION = (
    "Protect your outdoor patio furniture from harsh elements with this outdoor patio furniture cover. "
    "It is made of heavy-duty 600D polyester with a waterproof backing, so rain and snow run straight off. "
    "Elastic cord in the hem and two buckle straps keep it snug on windy days. "
    "Vents on both sides let trapped moisture escape, so mildew does not build up underneath. "
    "Fits double chaise lounges up to 80\" long and 60\" wide."
)
CHAPTER_VALIDATION_RANK = 41  # the chapter's product is the 42nd validation product in file order

# ---------------------------------------------------------------------------------------------------------
# Vocabulary for names
# ---------------------------------------------------------------------------------------------------------

COLLECTIONS = """
abbott adair addison alcott alden alvarado amberly ansley arden ashby ashford aubrey avalon barnett baxter
beckett belmont benson bexley blakely bradford brennan brighton brookfield bryce caldwell calloway camden
carlisle carson chadwick chandler chester clayton colby conway corbin cortland crawford dalton darby
davenport dawson delaney denton devon dorsey drayton dunmore easton elkins ellison elmore emerson emmeline
everett fairfax fenwick finley fletcher forrest foster franklin gable garrison gentry gilmore glenwood
gordon graham griffin hadley halsey hamilton harlow harper hartley hayes henley holloway hudson huxley
irving jasper keaton kendall kensington kingsley lachlan langley larkin lawson leland lennox lincoln linden
logan lowell lyndon maddox malibu maloney marlow maxwell mercer merritt milford monroe montague morgan
nash newport norwood oakley orson parker paxton pembroke porter preston quincy radford raleigh ramsey
reid remington ridley rowan rowley russell rutland sawyer sedona shelby sheridan sinclair somerset stanton
sterling stratford sutton tatum thornton trenton tristan tucker vance vaughn walden warren waverly wesley
weston whitley wilder winslow wyatt yardley aldridge bellamy carrington delmar fairhope galloway hollis
kirkwood lakewood marisol navarro ormond pendleton rhodes solana thatcher ulster verona whitby
""".split()

V: dict[str, list[str]] = {
    "style": [
        "modern", "mid-century modern", "farmhouse", "rustic", "industrial", "traditional", "coastal",
        "scandinavian", "bohemian", "glam", "contemporary", "vintage", "transitional", "minimalist",
        "french country", "art deco", "cottage", "retro",
    ],
    "wood": [
        "solid wood", "oak", "white oak", "walnut", "acacia", "teak", "pine", "mango wood", "reclaimed wood",
        "bamboo", "cherry", "maple", "rubberwood", "birch", "manufactured wood", "ash", "solid pine",
    ],
    "metal": ["metal", "iron", "wrought iron", "steel", "stainless steel", "brass", "aluminum", "copper"],
    "stone": ["marble", "faux marble", "travertine", "concrete", "glass", "tempered glass", "stone"],
    "fabric": [
        "velvet", "linen", "leather", "faux leather", "genuine leather", "boucle", "chenille", "polyester",
        "microfiber", "tweed", "performance fabric", "cotton",
    ],
    "colour": [
        "white", "black", "gray", "light gray", "charcoal", "navy", "blue", "green", "sage", "olive", "ivory",
        "cream", "beige", "tan", "brown", "espresso", "natural", "gold", "silver", "red", "burgundy", "blush",
        "pink", "teal", "mustard", "rust", "taupe", "emerald", "orange", "yellow",
    ],
    "finish": [
        "matte black", "brushed nickel", "oil rubbed bronze", "polished chrome", "antique brass", "satin brass",
        "brushed gold", "polished nickel", "aged bronze", "chrome",
    ],
    "outdoor": [
        "teak", "acacia", "wicker", "rattan", "aluminum", "cast aluminum", "wrought iron", "resin",
        "eucalyptus", "all-weather wicker", "steel", "recycled plastic",
    ],
    "bedsize": ["twin", "twin xl", "full", "queen", "king", "california king", "full/queen", "king/california king"],
    "bedfabric": [
        "cotton", "100% cotton", "linen", "microfiber", "flannel", "sateen", "percale", "bamboo", "silk",
        "egyptian cotton", "jersey knit", "organic cotton", "washed linen", "brushed microfiber", "velvet",
    ],
    "pattern": [
        "striped", "floral", "geometric", "plaid", "solid", "paisley", "damask", "abstract", "medallion",
        "botanical", "chevron", "polka dot", "buffalo check", "trellis", "ikat", "moroccan", "oriental",
        "southwestern", "tribal",
    ],
    "rugsize": ["2' x 3'", "3' x 5'", "4' x 6'", "5' x 7'", "5' x 8'", "6' x 9'", "8' x 10'", "9' x 12'",
                "6' round", "8' round"],
    "runnersize": ["2'6\" x 8'", "2' x 10'", "2'3\" x 12'", "2'6\" x 6'"],
    "rugmaterial": ["wool", "jute", "hand-tufted wool", "cotton", "polypropylene", "sisal", "shag", "viscose",
                    "hand-knotted wool", "flatweave", "hand-woven"],
    "pillowsize": ['18" x 18"', '20" x 20"', '16" x 16"', '22" x 22"', '12" x 20"', '14" x 24"', '24" x 24"'],
    "pillowfabric": ["linen", "velvet", "cotton", "faux fur", "boucle", "chenille", "wool", "silk",
                     "cotton blend", "embroidered", "knit", "faux leather", "sherpa"],
    "drawers": [f"{n} drawer" for n in (2, 3, 3, 4, 5, 6, 6, 7, 8, 9)],
    "doors": ["2 door", "3 door", "4 door"],
    "shelves": ["3 shelf", "4 shelf", "5 shelf", "6 shelf"],
    "tiers": ["2 tier", "3 tier", "4 tier", "5 tier"],
    "lights": [f"{n} light" for n in (1, 2, 3, 3, 4, 5, 6, 6, 8, 9, 12)],
    "pieces": [f"{n} piece" for n in (2, 3, 4, 5, 5, 6, 7, 8, 9, 10, 12)],
    "bigpieces": [f"{n} piece" for n in (12, 14, 16, 18, 20, 24, 32, 45, 53, 65)],
    "smallpieces": [f"{n} piece" for n in (3, 4, 5, 6, 7, 8, 9)],
    "packs": ["2 pack", "3 pack", "4 pack", "6 pack", "2 pack", "4 pack"],
    "sets": ["2 piece", "3 piece", "4 piece", "2 piece"],
    "slipfabric": ["stretch jersey", "velvet", "cotton", "linen", "polyester", "chenille", "faux suede", "waterproof"],
    "seatwidth": ['72"', '78"', '84"', '88"', '90"', '96"', '62"', '68"'],
    "tvwidth": ['48"', '55"', '58"', '60"', '65"', '70"', '72"', '80"'],
    "tablewidth": ['36"', '42"', '48"', '60"', '72"', '84"', '96"'],
    "height": ['24"', '26"', '29"', '30"', '30.5"', '32"', '42"'],
    "lampheight": ['16"', '19"', '24"', '27"', '28.5"', '32"', '58"', '63"', '65"', '72"'],
    "foodmat": ["glass", "borosilicate glass", "plastic", "bpa-free plastic", "stainless steel"],
    "curtainfabric": ["linen", "cotton", "velvet", "polyester", "linen blend", "voile", "faux silk", "jacquard"],
    "sinkwidth": ['24"', '27"', '30"', '33"', '36"'],
    "vanitywidth": ['24"', '30"', '36"', '42"', '48"', '60"', '72"'],
    "diameter": ['8"', '10"', '12"', '14"', '16"', '20"', '24"', '30"', '36"'],
    "capacity": ["1.5 qt.", "2 qt.", "3 qt.", "4 qt.", "5.5 qt.", "6 qt.", "7 qt.", "8 qt."],
    "cup": ["4 cup", "8 cup", "10 cup", "12 cup", "14 cup"],
    "shape": ["round", "square", "rectangular", "oval"],
    "kitchenmat": ["stainless steel", "cast iron", "enameled cast iron", "nonstick aluminum", "hard-anodized aluminum",
                   "copper", "carbon steel", "ceramic"],
    "kitchencolour": ["black", "white", "red", "cream", "sage", "blue", "gray", "stainless steel", "matte black",
                      "copper"],
    "ceramic": ["porcelain", "stoneware", "ceramic", "bone china", "earthenware", "melamine", "glass"],
    "glass": ["glass", "crystal", "recycled glass", "lead-free crystal", "hand-blown glass", "acrylic"],
    "candlescent": ["vanilla", "lavender", "sandalwood", "fresh linen", "sea salt", "cedarwood", "eucalyptus",
                    "pumpkin spice", "unscented", "fig", "amber"],
    "plant": ["fiddle leaf fig", "olive", "monstera", "eucalyptus", "boxwood", "bird of paradise", "palm",
              "snake plant", "lavender", "peony", "orchid", "fern", "succulent", "rose", "hydrangea"],
    "art": ["abstract", "botanical", "landscape", "coastal", "floral", "black and white", "watercolor",
            "geometric", "typography", "nautical", "animal"],
    "artmedium": ["canvas", "framed print", "painting on canvas", "graphic art print", "photograph",
                  "metal wall decor"],
    "fanwidth": ['42"', '44"', '48"', '52"', '54"', '56"', '60"', '65"', '72"'],
    "towel": ["cotton", "turkish cotton", "egyptian cotton", "bamboo", "quick dry", "waffle weave", "organic cotton"],
    "toddler": ["kids", "toddler", "youth"],
    "fit": ["double chaise", "sectional", "l-shaped", "u-shaped", "rectangular", "round", "square", "oval", "large",
            "extra large", "small"],
    "grilltype": ["gas", "charcoal", "kettle", "pellet", "flat top"],
    "heavy": ["heavy duty", "waterproof", "water-resistant", "breathable"],
    "bulb": ["led", "integrated led", "dimmable", "smart"],
}

# ---------------------------------------------------------------------------------------------------------
# Families: description templates shared by similar classes
# ---------------------------------------------------------------------------------------------------------
# Slots a template may use: {type} {a_type} {material} {wood} {fabric} {finish} {colour} {style} {room} {years}
# {n} {n2} {cap} {watts} {collection} {name} {covered}; copy templates use "{a}{run}": an optional adjective,
# then the end of the product's own name.
# A template (or room) may start with keyword tags, "<sofa,chair;!bean,stool>": it is used only for products whose
# class, type or name contains one of the tags before ";" and none of the tags after "!", as whole words (a plural
# "s" or "es" allowed).
# "<@collection>" asks for a name with a collection in it.

COPY_GENERIC = [
    "This {a}{run} is a simple way to refresh your space.",
    "We designed this {a}{run} with everyday use in mind.",
    "<@collection>Pair this {a}{run} with other pieces from the {collection} collection for a coordinated look.",
    "Our {run} ships in one box, right to your door.",
    "Whether you're updating one room or the whole house, this {a}{run} fits right in.",
    "Backed by a {years}-year limited warranty, this {a}{run} is built to last.",
    "Thoughtfully made, this {a}{run} will serve you well for years to come.",
    "You'll love how this {a}{run} brings style and function together.",
    "Every {run} is inspected by hand before it leaves our warehouse.",
    "At this price, this {a}{run} is an easy upgrade.",
    "Simply put, this {a}{run} delivers quality you can see and feel.",
    "The {run} is designed to be both practical and beautiful.",
    "Looking for a gift? This {a}{run} makes a thoughtful one.",
    "Customers love this {a}{run} for its quality and value.",
    "Our {run} comes from a family-owned workshop we have partnered with for years.",
    "Add this {a}{run} to your cart and see the difference for yourself.",
]

BODY_GENERIC = [
    "Its simple design works with a wide range of styles.",
    "Everything you need comes in the box.",
    "Please check the dimensions to make sure it fits your space.",
    "Our team tested it in real homes before we put it on the site.",
    "It is easy to care for and built to last.",
    "Thoughtful details make it a pleasure to use every day.",
]

CLOSE_GENERIC = [
    "Imported.",
    "Please allow for slight variations in color and finish.",
    "Colors may vary slightly from what you see on screen.",
    "Backed by a {years}-year manufacturer's warranty.",
    "Satisfaction guaranteed.",
    "Ships in {n} to {n2} business days.",
]

SEAT_SOFA = "sofa,sectional,loveseat,couch,sleeper,chaise,futon"
SEAT_CHAIR = "armchair,accent chair,club,barrel,wingback,slipper,side chair"
SEAT_DESK = "office,task,executive,gaming,drafting,ergonomic,mesh"
BATH_PLUMB = "vanity,bathroom,shower,toilet,tub,bath,vessel,pedestal sink,medicine,towel warmer,console sink,wall mount sink"
OUT_LIGHT = "outdoor,path,landscape,lantern,barn,deck light,well light,spot light,string,motion,solar"
FAUX = "plant,tree,flower,floral,stems,arrangement,wreath,garland,centerpiece"
CANDLE = "scented,jar candle,pillar,taper candle,flameless"

FAMILIES: dict[str, dict] = {
    "seating": {
        "rooms": ["<!" + SEAT_DESK + ",dining,bar,counter,kids>living room", "<!" + SEAT_DESK + ",dining,bar,counter>den",
                  "<!" + SEAT_DESK + ",dining,bar,counter,massage>family room", "<chair,chaise,glider,rocking,bean;!" + SEAT_DESK + ",dining,bar,counter,massage,kids>reading nook",
                  "<" + SEAT_CHAIR + ",bench,ottoman,chaise,pouf>bedroom", "<" + SEAT_DESK + ">home office", "<dining,parsons,windsor>dining room",
                  "<bar,counter>kitchen", "<kids,bean>playroom", "<glider,rocking,rocker>nursery", "<sofa,futon,sleeper,loveseat>apartment",
                  "<bench>entryway"],
        "open": [
            "Sink into comfort with {a_type} that looks as good as it feels.",
            "<!" + SEAT_DESK + ",bar,counter,dining>Every living space needs a great place to sit, and this {type} delivers.",
            "Give your {room} a fresh focal point with {a_type} in {colour}.",
            "<" + SEAT_SOFA + "," + SEAT_CHAIR + ",recliner>Crafted for everyday lounging, this piece brings {style} charm to your {room}.",
            "<!" + SEAT_DESK + ",dining,bar,counter,bench,stool>Kick back and relax: this {type} was made for long afternoons and lazy weekends.",
            "Looking for a seat that is comfortable, sturdy, and easy on the eyes?",
            "<!bean,windsor,rocking,rocker>Upholstered in soft {fabric}, this {type} adds a touch of warmth to any {room}.",
            "<" + SEAT_SOFA + "," + SEAT_CHAIR + ">Round out your {room} with {a_type} built on a kiln-dried hardwood frame.",
            "Good seating makes a room, and {a_type} is a smart place to start.",
            "Bring home laid-back {style} style with this {colour} {type}.",
            "<dining,bar stool,counter,parsons,windsor>Pull up a seat: this {type} is made for long dinners and lingering conversations.",
            "<" + SEAT_DESK + ">Long workdays go easier in {a_type} that supports you from every angle.",
            "Introducing the {name}.",
        ],
        "body": [
            "<!bean," + SEAT_DESK + ",massage,stool,kids>It is built on a kiln-dried solid wood frame for lasting support.",
            "<!bean,rocking,windsor,stool>High-density foam cushions hold their shape, even after years of daily use.",
            "<!bean,windsor>The upholstery is {fabric} that is soft to the touch and easy to care for.",
            "<sofa,loveseat,accent,armchair,side chair,club,slipper,bench,ottoman,dining,parsons,barrel,wingback>Tapered legs lift the seat off the floor for an airy, open look.",
            "<" + SEAT_SOFA + ",club>Pocketed coils in the seat add bounce and keep the cushions from sagging.",
            "<!bean,ottoman,pouf,stool,footstool,futon,windsor,mesh,kids>Button tufting along the back adds a tailored, timeless detail.",
            "<sofa,loveseat,sectional,armchair,accent chair,futon,recliner,club>Its clean lines and slim arms make it easy to fit into smaller rooms.",
            "<!bean," + SEAT_DESK + ",glider,rocking,rocker,massage>Plastic glides on the feet protect hardwood floors from scratches.",
            "<sofa,sectional,loveseat,couch,chaise,armchair,club>The cushions are reversible, so you can flip them to even out wear.",
            "<sofa,sectional,loveseat,couch,armchair,accent,chaise,club,barrel,recliner,bean,glider>A generous seat depth gives you room to curl up with a book.",
            "<!windsor,leather>The stain-resistant fabric stands up well to kids and pets.",
            "Weight capacity is {cap} lbs.",
            "<sofa,sectional,loveseat,couch,accent,armchair,ottoman,chaise,bench,club,slipper>Legs attach in minutes with no tools required.",
            "<armchair,accent chair,club,barrel,wingback,recliner,glider,slipper>Pair it with a matching ottoman to put your feet up in style.",
            "<swivel," + SEAT_DESK + ",bar stool,counter stool>The seat swivels a full 360 degrees.",
            "<" + SEAT_DESK + ">Pneumatic height adjustment, tilt tension, and padded armrests let you set it up just right.",
            "<bar stool,counter stool,counter height,drafting>A built-in footrest gives your feet a place to land.",
            "<storage ottoman,storage bench,cocktail ottoman>Lift the top to reveal hidden storage for throws and magazines.",
            "<bean>Filled with shredded foam, it molds to your body.",
            "<glider,rocking,rocker>A smooth gliding motion soothes little ones to sleep.",
            "<power,lift chair,massage>One-touch power controls let you recline to any position.",
            "<massage>Heat and airbag massage settings target your back, shoulders, and calves.",
            "<kids>Sized just right for little ones, it is light enough for kids to move on their own.",
            "<windsor,dining chair,side chair,rocking,bar stool,counter stool>The seat is contoured for comfort through long meals.",
        ],
        "copy": [
            "<" + SEAT_SOFA + "," + SEAT_CHAIR + ",recliner,glider>With its deep seat and plush back, this {a}{run} invites you to stay a while.",
            "<chair,chaise,glider,rocking,recliner,bean;!dining,bar,counter," + SEAT_DESK + ">Place this {a}{run} by a window and you have an instant reading spot.",
            "Set in your {room}, this {a}{run} becomes the spot everyone wants.",
            "<dining,bar,counter,parsons,windsor>Pull this {a}{run} up to the table and dinner lasts a little longer.",
        ],
        "close": ["Minimal assembly required.", "<!windsor,mesh>Spot clean with a damp cloth."],
        "adj": ["comfy", "cozy", "plush", "inviting", "upholstered", "stylish", "classic", "elegant"],
        "mats": ["polyester", "linen", "velvet", "faux leather", "microfiber", "chenille"],
        "dims": (20, 100, 28, 42, 28, 40),
    },
    "tables": {
        "rooms": ["<coffee,cocktail,end,side,c table,tray,nesting,console,sofa table>living room",
                  "<dining,pub,counter,bar table,breakfast,card,game,poker>dining room", "<console,entryway>entryway",
                  "<desk,converter>home office", "<coffee,end,side,console,card,game>den", "<nightstand,vanity,end,side>bedroom",
                  "<pub,counter,breakfast,bar table,dining>kitchen", "<coffee,end,side,console,card,game,poker>family room",
                  "<kids,art>playroom", "<desk>loft"],
        "open": [
            "Anchor your {room} with {a_type} that is as useful as it is handsome.",
            "This {type} brings {style} character to any space.",
            "A good table ties a room together, and this {type} does just that.",
            "Made from {material}, this {type} is built for everyday living.",
            "<coffee,cocktail,end table,side table,c table,tray table,nesting,console,sofa table>Whether you're setting down a cup of coffee or spreading out a puzzle, {a_type} earns its keep.",
            "Clean lines and a sturdy build make this {type} an easy pick.",
            "<!set>Give your {room} a hardworking surface with this {colour} {type}.",
            "<!kids>The warm grain of {wood} takes center stage on this {type}.",
            "Simple, solid, and made to last: that is the idea behind this {type}.",
            "<dining,pub,counter height,bar table,breakfast,card,game,poker>Gather everyone around {a_type} made for family dinners and game nights.",
            "<desk,converter>Get more done at {a_type} that keeps your work organized.",
            "Introducing the {name}.",
        ],
        "body": [
            "The top is finished with a protective lacquer that resists water rings and scratches.",
            "<!pedestal,trestle,sled,standing,converter,set,c table,nesting,l-shaped,floating,secretary,waterfall,kids>Tapered legs and a slim apron give it a light, open look.",
            "<coffee,cocktail,end table,side table,console,sofa table,entryway>A lower shelf offers extra room for books, baskets, or board games.",
            "<!standing,converter,kids>Its distressed finish gives it a lived-in, rustic look right out of the box.",
            "<!standing,converter,nesting,floating,kids>Mortise-and-tenon joinery keeps it steady for years.",
            "<!floating,converter>Adjustable levelers on each leg keep it from wobbling on uneven floors.",
            "<!floating,converter>The {material} top is sealed against spills and everyday wear.",
            "Rounded corners make it a safe choice for homes with small children.",
            "<!kids>Each piece is hand-finished, so no two look exactly alike.",
            "It arrives with all hardware and clear, step-by-step instructions.",
            "<!floating,kids>The frame is made of powder-coated steel for strength and stability.",
            "Wipe clean with a soft, dry cloth; avoid abrasive cleaners.",
            "<set>The set includes a table and matching chairs.",
            "<extendable>An extension leaf lets it seat more guests when company comes.",
            "<lift top>The lift top rises to a comfortable height for laptop work or meals on the sofa.",
            "<standing,height adjustable>A dual-motor base raises the desk smoothly from sitting to standing height.",
            "<desk,vanity;!standing,converter,floating>Drawers keep supplies and cords within reach.",
            "<round>The round top seats four comfortably.",
            "<vanity>The mirror and a cushioned stool make getting ready a pleasure.",
            "<!dining,set,pub,counter>Sized for small spaces, it fits neatly into a corner or under a window.",
            "<card,game,poker>A padded, felt-lined top is ready for cards, chips, and puzzles.",
        ],
        "copy": [
            "<coffee,cocktail,end table,side table,console,sofa table,nesting,c table,tray table,entryway>With room for lamps, drinks, and decor, this {a}{run} keeps essentials close at hand.",
            "<!dining,set,pub,card,game,poker,kids,standing,converter,counter,bar>Style this {a}{run} with a stack of books and a small plant for an easy, lived-in look.",
            "Built from {material}, this {a}{run} is made to be used every day.",
            "<dining,pub,counter,card,poker,game,bar table,breakfast>Pull up chairs around this {a}{run} and start a new family tradition.",
            "<desk>Set up this {a}{run} in a spare corner and you have a home office.",
        ],
        "close": ["Assembly required.", "Some assembly required; all hardware is included."],
        "adj": ["sturdy", "handsome", "rustic", "versatile", "sleek", "classic", "solid"],
        "mats": ["solid wood", "manufactured wood", "acacia", "oak", "metal", "glass", "marble"],
        "dims": (16, 96, 16, 40, 18, 31),
    },
    "casegoods": {
        "rooms": ["<nightstand,bedside,dresser,chest,armoire,wardrobe,jewelry,lingerie>bedroom",
                  "<nightstand,bedside,dresser,chest>guest room",
                  "<bookcase,tv,entertainment,media,accent,credenza,apothecary>living room",
                  "<bookcase,filing,file>home office", "<sideboard,buffet,server,china,curio,bar,wine>dining room",
                  "<island,cart,bakers,microwave,pantry,hutch,kitchen;!bar cart>kitchen", "<changing,toy>nursery",
                  "<toy,bookcase>kids room", "<accent,apothecary,storage cabinet>entryway",
                  "<tv,entertainment,media,bookcase,bar>family room", "<wine,bar>home bar", "<accent,storage,cabinet>hallway"],
        "open": [
            "Keep clutter out of sight with {a_type} that has room for everything.",
            "Storage that looks good is hard to find, but this {type} delivers.",
            "This {type} combines generous storage with {style} good looks.",
            "Crafted from {material}, this {type} brings warmth and order to your {room}.",
            "Give your {room} the storage it needs with this {colour} {type}.",
            "<dresser,chest,armoire,wardrobe,lingerie>From folded sweaters to spare linens, {a_type} keeps it all organized.",
            "Every home needs a place to put things, and this {type} is a handsome one.",
            "Bring {style} style and smart storage to your {room}.",
            "Simple and sturdy, this {type} is made to be used every day.",
            "<nightstand,bedside>Keep your bedside essentials within arm's reach with this {type}.",
            "<tv,entertainment,media>Movie night just got more organized with this {type}.",
            "<bar,wine,sideboard,buffet,server,china,curio>Entertaining is easier with {a_type} that keeps glasses, bottles, and serveware close.",
            "Introducing the {name}.",
        ],
        "body": [
            "<drawer,dresser,chest,nightstand,filing,file,changing,bedside,lingerie;!toy>Drawers glide smoothly on full-extension metal runners.",
            "<drawer,dresser,chest,nightstand,changing,bedside,lingerie;!toy>Dovetail joinery on the drawers adds strength where it counts.",
            "<bookcase,cabinet,tv,entertainment,media,sideboard,buffet,pantry,hutch,china,curio,credenza,armoire,wardrobe;!filing>Adjustable shelves let you arrange the space to fit your things.",
            "<!cart,tabletop,topper,toy box,island,rack>An anti-tip kit is included to secure it to the wall.",
            "<!filing,mobile,topper>Its distressed finish and antique-style hardware give it vintage charm.",
            "<dresser,chest,jewelry,lingerie;!toy>Felt-lined top drawers keep jewelry and small items safe.",
            "<tv,entertainment,media,credenza,nightstand>The back panel has cutouts for cords, so electronics stay neat.",
            "<door,cabinet,armoire,wardrobe,sideboard,buffet,credenza,pantry,hutch,china,curio,entertainment,tv;!filing>Soft-close hinges keep the doors from slamming.",
            "It is made from {material} with a durable, easy-clean finish.",
            "<drawer,dresser,chest,nightstand,filing,sideboard,credenza,tv,media;!toy>Recessed pulls give the front a clean, modern look.",
            "Wipe clean with a damp cloth and dry immediately.",
            "<nightstand,bedside>A built-in charging station with USB ports keeps your phone powered overnight.",
            "<bookcase,etagere,ladder,bakers,hutch,curio>Open shelving shows off books, plants, and collectibles.",
            "<cart,mobile,island,rolling,microwave>Locking casters let you roll it where you need it, then keep it in place.",
            "<wine>It holds bottles on their sides, keeping the corks moist.",
            "<china,curio,lighted>Glass doors and interior lighting put your best dishes on display.",
            "<armoire,wardrobe>A hanging rod and shelves make room for both folded and hanging clothes.",
            "<filing,file>Locking drawers hold letter- and legal-size hanging files.",
            "<changing>Safety rails on all four sides keep baby secure during changes.",
            "<toy>A slow-close lid hinge protects small fingers.",
            "<island,cart,bakers,microwave;!bar cart>The butcher block top doubles as extra prep space.",
            "<tv,entertainment,media>It holds TVs up to 65\" and 120 lbs.",
            "<jewelry>A mirror hides inside the door, with hooks for necklaces and slots for rings.",
            "<bar cart,serving cart>A removable tray top and a rail keep bottles from tipping.",
        ],
        "copy": [
            "With plenty of room inside, this {a}{run} keeps your {room} tidy.",
            "<door,cabinet,armoire,wardrobe,credenza,sideboard,buffet,pantry,toy,chest,hutch>Fill this {a}{run} with linens, books, or toys, then close the doors on clutter.",
            "<!island,cart>Tuck this {a}{run} against a wall and gain storage without losing floor space.",
            "<cart,rolling>Roll this {a}{run} wherever the party is.",
        ],
        "close": ["Assembly required.", "<!cart,rack,tabletop>Anti-tip hardware included."],
        "adj": ["spacious", "handsome", "sturdy", "classic", "versatile", "roomy"],
        "mats": ["<!rack,cart,filing,file>solid wood", "<!rack,filing,file>manufactured wood", "<!rack,cart,filing,file>pine",
                 "<!rack,cart,filing,file>mango wood", "<!rack,cart,filing,file>oak", "<!filing,file>acacia",
                 "<rack,cart,filing,file>steel", "<rack,cart>iron"],
        "dims": (18, 72, 14, 22, 24, 72),
    },
    "beds": {
        "rooms": ["<crib,bassinet>nursery", "<bunk,loft,kids,trundle,twin>kids room", "<!crib,bassinet>bedroom",
                  "<!crib,bassinet>guest room", "<!crib,bassinet,bunk,loft,twin>master suite", "<daybed,loft>studio"],
        "open": [
            "Good, deep sleep starts with a solid foundation.",
            "Rest easy with {a_type} built to last for years.",
            "This {type} brings {style} style to your {room}.",
            "<!crib,bassinet,frame,base>A beautiful bed makes a bedroom, and this {type} is a great place to start.",
            "Crafted from {material}, this {type} pairs timeless looks with sturdy support.",
            "Turn your {room} into a retreat with this {colour} {type}.",
            "Wake up to a {room} that feels put together, thanks to this {type}.",
            "<upholstered,wingback>Upholstered in {fabric}, this {type} feels soft and looks polished.",
            "<bunk,loft,daybed,trundle>Sleepovers and small rooms are easier with this {type}.",
            "<crib,bassinet>Give your little one a safe, cozy place to sleep.",
            "Introducing the {name}.",
        ],
        "body": [
            "<bed,platform,daybed,bunk,loft;!headboard,crib,bassinet,adjustable,skirt>A wooden slat system supports your mattress without the need for a box spring.",
            "<!crib,bassinet,headboard,bunk,loft>Center support legs keep the frame steady and quiet.",
            "<upholstered,wingback>The headboard is padded and finished with channel tufting.",
            "<platform,bed frame,panel bed,canopy,poster,metal,daybed;!storage,headboard,crib,bassinet,adjustable>Under-bed clearance leaves room for storage bins.",
            "<bunk,loft>Guardrails on both sides of the top bunk add peace of mind.",
            "The frame is made of {material} and finished by hand.",
            "<!crib,bassinet,headboard>It works with most memory foam, latex, and innerspring mattresses.",
            "<!headboard>Mattress and bedding are sold separately.",
            "<!crib,bassinet,headboard>Weight capacity is {cap} lbs.",
            "<!crib,bassinet,headboard>No squeaks: padded slats and tight joints keep things quiet.",
            "<headboard>It attaches to most standard bed frames with the included bolts.",
            "<storage>Four deep drawers in the base roll out for extra storage.",
            "<convertible,3 in 1>It converts to a toddler bed, daybed, and full-size bed as your child grows.",
            "<crib>The mattress support adjusts to three heights as your baby grows.",
            "<bassinet>Breathable mesh sides let you see your baby from every angle.",
            "<trundle,daybed>A pull-out trundle makes room for an overnight guest.",
            "<adjustable>A wireless remote raises your head and feet for reading or watching TV.",
            "<crib,bassinet,bunk,loft>It meets or exceeds all CPSC safety standards.",
            "<headboard>Adjustable legs let you set the height to suit your mattress.",
            "<headboard>A solid frame keeps it steady against the wall.",
        ],
        "copy": [
            "<!crib,bassinet>Dress this {a}{run} with crisp white sheets for a hotel look at home.",
            "<!headboard,crib,bassinet>Built on a sturdy frame, this {a}{run} will give you years of restful sleep.",
            "With its clean profile, this {a}{run} suits a modern or traditional {room}.",
            "<crib,bassinet>Lay your baby down in this {a}{run} and rest easy.",
        ],
        "close": ["<!crib,bassinet>Assembly required; two people recommended.", "<!headboard>Mattress not included."],
        "adj": ["cozy", "sturdy", "elegant", "classic", "handsome"],
        "mats": ["solid wood", "<!crib,bassinet>metal", "pine", "<upholstered,wingback>linen", "<upholstered,wingback>velvet",
                 "<!crib,bassinet>manufactured wood"],
        "dims": (40, 86, 75, 90, 12, 60),
    },
    "sleep": {
        "rooms": ["bedroom", "guest room", "kids room", "dorm room", "master suite"],
        "open": [
            "Better sleep begins with the right support.",
            "Wake up refreshed with {a_type} designed for all-night comfort.",
            "Tossing and turning? This {type} may be just what you need.",
            "Give your bed an instant upgrade with this {type}.",
            "Cool, soft, and supportive, this {type} is made for deep, restful sleep.",
            "Hotel-quality sleep is easier to get than you might think.",
            "<memory,gel,cooling,latex,hybrid>Sleep hot? This {type} is designed to keep you cool all night.",
            "<!protector,encasement>Designed with side, back, and stomach sleepers in mind, this {type} adapts to you.",
            "<protector,encasement>Keep your mattress fresh and clean for years with this {type}.",
        ],
        "body": [
            "<memory,gel,hybrid,cooling,topper>Gel-infused memory foam draws heat away from your body.",
            "The cover is hypoallergenic and resistant to dust mites.",
            "<!protector,encasement>It is made of {material} with a breathable, moisture-wicking cover.",
            "<hybrid,innerspring>Pocketed coils reduce motion transfer, so you won't feel a restless partner.",
            "<mattress;!protector,pad,encasement,down>It arrives compressed in a box; allow 24 to 48 hours for it to fully expand.",
            "<pillow,topper,mattress;!protector,pad,encasement>The removable cover zips off for easy washing.",
            "<mattress,pillow;!protector,pad,encasement,topper>Medium-firm support keeps your spine aligned.",
            "<foam,mattress,topper;!protector,pad,encasement,down>It is CertiPUR-US certified, made without harmful chemicals.",
            "<mattress,pad;!protector,encasement,topper>A quilted top adds a layer of plush cushioning.",
            "<pillow,protector,pad,encasement>Machine wash cold and tumble dry low.",
            "<protector,encasement>A waterproof yet breathable barrier guards against spills, sweat, and accidents.",
            "<pillow>The adjustable fill lets you add or remove foam for your perfect loft.",
            "<protector,pad,topper>Deep pockets fit mattresses up to 18\" thick.",
        ],
        "copy": [
            "Slip this {a}{run} onto your bed and feel the difference from the first night.",
            "Each {run} is tested for durability and comfort.",
            "<mattress;!protector,pad,encasement,topper>Our {run} comes with a 100-night sleep trial.",
        ],
        "close": ["Made in the USA.", "<pillow,protector,pad,encasement>Machine washable."],
        "adj": ["supportive", "cooling", "plush", "breathable", "hypoallergenic", "soft"],
        "mats": ["memory foam", "latex", "down alternative", "cotton", "bamboo", "gel memory foam"],
        "dims": (20, 80, 26, 84, 2, 14),
    },
    "outdoor": {
        "rooms": ["patio", "deck", "porch", "backyard", "balcony", "<!hammock>poolside", "garden", "<!hammock>sunroom"],
        "open": [
            "Make the most of warm weather with {a_type} built for the outdoors.",
            "Turn your {room} into an outdoor living room with this {type}.",
            "<!table,cushion,pillow>Relax in the fresh air on this {colour} {type}.",
            "Outdoor living is easy with weather-resistant pieces like this {type}.",
            "<!cushion,pillow>Give your outdoor patio furniture lineup a stylish update with this {type}.",
            "<!table,hammock,cushion,pillow>Long summer evenings call for comfortable outdoor seating.",
            "<!cushion,pillow,hammock>Crafted from {material}, this {type} is made to stand up to sun and rain.",
            "Bring your indoor comfort outside with this {style} {type}.",
            "<set,table,sofa,sectional,group,bar>Entertaining outdoors? Start with this {type}.",
            "<cushion,pillow>Refresh tired outdoor patio furniture with {a_type} in {colour}.",
            "<cushion,pillow>Faded, flattened cushions can make even the best outdoor patio furniture look tired.",
            "Introducing the {name}.",
        ],
        "body": [
            "<!cushion,pillow,hammock>The frame is made of {material} that resists rust and rot.",
            "<sofa,sectional,group,conversation,lounge,chaise,swing,daybed,patio furniture set,loveseat,egg,with cushion>Weather-resistant cushions are covered in fade-resistant olefin fabric.",
            "<aluminum,steel,iron,metal>A powder-coated finish protects it from the elements.",
            "<cushion,sofa,sectional,group,conversation,lounge,chaise,daybed,loveseat,egg;!table>Cushion covers zip off for easy cleaning.",
            "<table,set,sofa,sectional,group,bench,chair;!cushion>Adjustable feet keep it level on uneven decks and pavers.",
            "<cushion,sofa,sectional,group,conversation,lounge,chaise,swing,daybed,loveseat,egg>We recommend storing the cushions indoors or under a cover during the off-season.",
            "<wicker,rattan>All-weather wicker is woven by hand over a sturdy aluminum frame.",
            "<teak>Teak naturally weathers to a silvery patina over time.",
            "<cushion>Quick-dry foam lets water drain through, so you can sit down soon after a rain shower.",
            "<stacking,dining chair,bistro>The chairs stack to save space when not in use.",
            "Clean with mild soap and water.",
            "<dining,bistro,table;!chair,stool,coffee,side table>An umbrella hole in the table fits most standard patio umbrellas.",
            "<cushion>Ties on the back keep the cushion in place on breezy days.",
            "<hammock,swing>It holds up to {cap} lbs.",
            "<adirondack,lounge,chaise,egg,zero>A contoured seat and wide arms make it easy to settle in with a cold drink.",
            "<set,group>Everything you need for a complete seating area comes in one set.",
            "<hammock,swing,canopy>The polyester fabric is treated to resist mildew and fading.",
            "<cushion,pillow>UV-resistant fabric holds its color in full sun.",
            "<!cushion,pillow>Weather-resistant materials stand up to the elements year after year.",
            "<cushion,pillow>Outdoor fabric stands up to the elements, from summer sun to spring showers.",
        ],
        "copy": [
            "<set,table,sofa,sectional,group,loveseat>Gather friends around this {a}{run} for long summer evenings.",
            "<!table,pillow>After a long day, unwind on this {a}{run} and watch the sunset.",
            "Built to withstand the elements, this {a}{run} will look good season after season.",
            "<set,sofa,sectional,group,chair,chaise,loveseat,bench,swing;!cushion>Complete the look with cushions and a cover made for this {a}{run}.",
            "<cushion,pillow>Toss this {a}{run} on any chair or chaise for instant comfort.",
        ],
        "close": ["<!cushion,pillow>Assembly required.", "Cover your outdoor furniture when not in use to extend its life."],
        "adj": ["outdoor", "weather-resistant", "all-weather", "durable", "sturdy", "outdoor"],
        "mats": ["aluminum", "teak", "wicker", "acacia", "resin", "steel"],
        "dims": (20, 96, 20, 84, 16, 40),
    },
    "cover": {
        "rooms": ["patio", "deck", "backyard", "porch", "garden", "yard"],
        "open": [
            "Protect your {covered} from harsh elements with this {a}{run}.",
            "Keep your {covered} clean and dry all year long.",
            "Rain, snow, sun, and falling leaves can take a toll on your {covered}.",
            "Give your {covered} the protection it deserves.",
            "Extend the life of your {covered} with a cover made for every season.",
            "Harsh sun and heavy rain are no match for this {a}{run}.",
            "Shield your {covered} from dust, pollen, and strong UV rays.",
            "Leaving your {covered} uncovered through the winter can lead to rust, mildew, and fading.",
            "Protect your investment: a good cover keeps your {covered} looking new.",
            "Keep the elements off your {covered} with this {a}{run}.",
        ],
        "body": [
            "It is made of {material} with a waterproof backing.",
            "Elastic hem cords and adjustable buckle straps keep the cover snug, even on windy days.",
            "Built-in air vents reduce wind lift and let moisture escape, so mildew doesn't build up underneath.",
            "Padded handles make it easy to put on and take off.",
            "Double-stitched seams add strength where the cover sees the most stress.",
            "Measure before you order to be sure of a good fit.",
            "The fabric is treated to resist fading, cracking, and tearing in the elements.",
            "To clean, simply hose it down and let it air dry.",
            "When not in use, fold it into the included storage bag.",
            "A drawstring hem lets you cinch it tight around the legs.",
            "Taped seams keep water from seeping through the stitching.",
            "<grill,smoker,griddle>It fits most grills from the major brands.",
            "<grill,smoker,griddle,fire,heater>Let the surface cool completely before you put the cover on.",
            "It keeps the elements off, so your things are ready when you are.",
        ],
        "copy": [
            "<patio,chaise,ottoman,sofa,loveseat,table,chair>Simply slip this {a}{run} on after each use, and your furniture stays ready for the next sunny day.",
            "With a snug, tailored fit, this {a}{run} will stay put through wind and rain.",
            "Backed by a {years}-year warranty, this {a}{run} is made to last through many seasons.",
            "Choose this {a}{run} in {colour} to blend in with your outdoor space.",
        ],
        "close": ["<!grill,smoker,griddle,fire,heater,air>Furniture not included.", "Measure before ordering."],
        "adj": ["outdoor", "heavy-duty", "waterproof", "weather-resistant", "outdoor", "durable"],
        "mats": ["heavy-duty 600D polyester", "water-resistant polyester", "UV-treated oxford cloth",
                 "vinyl with a fleece lining", "breathable canvas", "solution-dyed polyester"],
        "dims": (20, 120, 20, 100, 20, 50),
    },
    "outdoor_living": {
        "rooms": ["patio", "deck", "backyard", "porch", "garden", "yard", "<!shed,gazebo,pergola,fire pit>balcony",
                  "front porch"],
        "open": [
            "Make your backyard the place to be with this {type}.",
            "Outdoor living gets an upgrade with {a_type} in {colour}.",
            "Extend the season on your {room} with this {type}.",
            "This {type} brings beauty and function to your {room}.",
            "Refresh your outdoor patio furniture and decor with this {type}.",
            "Whether you host every weekend or just like quiet mornings outside, this {type} fits in.",
            "Built for the outdoors, this {type} stands up to sun, wind, and rain.",
            "Add a finishing touch to your {room} with this {style} {type}.",
            "Spend more time outside with a little help from this {type}.",
        ],
        "body": [
            "It is made of {material} with a weather-resistant finish.",
            "<!planter,pot,bird bath>Rust-resistant hardware holds up in damp climates.",
            "<umbrella,planter,box,canopy,gazebo,statue,gnome,fountain,feeder,birdhouse,bag;!base>A UV-resistant coating keeps colors bright season after season.",
            "<planter,box,garden bed,pot;!storage,deck>Drainage holes keep water from pooling.",
            "<!planter,statue,gnome,pot>It sets up in minutes with basic tools.",
            "Store it in a covered area in winter to shield it from the elements.",
            "<fire,heater,gazebo,canopy,pergola,base,shed;!wood burning fire>The powder-coated steel frame resists chipping and rust.",
            "Clean with mild soap and water; avoid abrasive cleaners.",
            "<planter,fire bowl,umbrella,feeder,gnome,heater;!base,raised>It is lightweight enough to move around the yard.",
            "<umbrella,heater;!cover>Weighted at the base for stability on windy days.",
            "<umbrella;!base,cover>A crank lift and push-button tilt make it easy to open and angle toward the sun.",
            "<wood burning,fire bowl,fire pit;!propane,gas>A spark screen and poker are included.",
            "<propane,gas,heater;!electric>An auto shut-off valve cuts the gas if it tips over.",
            "<deck box,storage box,storage bag,storage bench,patio storage>It holds up to 120 gallons, enough for cushions, pool toys, and garden tools.",
            "<shed>A lockable door keeps bikes, mowers, and tools secure.",
            "<gazebo,pergola,canopy>Mosquito netting zips closed for bug-free evenings.",
            "<solar,fountain>A solar panel powers the pump by day; no wiring needed.",
            "<feeder>Perches on every side let several birds feed at once.",
            "It stands up to the elements, season after season.",
        ],
        "copy": [
            "<!shed,gazebo,pergola>Set this {a}{run} out on the {room} and enjoy it all season long.",
            "Built to handle the weather, this {a}{run} will look great for years.",
            "This {a}{run} makes a thoughtful housewarming gift for anyone with a yard.",
        ],
        "close": ["<!planter,statue,gnome,pot>Assembly required.", "Accessories not included."],
        "adj": ["outdoor", "weather-resistant", "durable", "decorative", "sturdy"],
        "mats": ["<fire,heater,gazebo,pergola,shed,base,umbrella,feeder>steel", "<fire,heater,gazebo,pergola,umbrella,base>aluminum",
                 "<planter,deck box,storage,bird,statue,gnome,fountain,shed>resin", "<fire,base,statue,bird bath,fountain>cast iron",
                 "<planter,pot,statue,gnome,fountain,bird bath>ceramic", "<planter,box,garden bed,shed,gazebo,pergola,feeder,birdhouse,bench>cedar",
                 "<umbrella,canopy,gazebo,bag>polyester", "<fountain,statue,planter,fire,bird bath>concrete"],
        "dims": (10, 120, 10, 120, 10, 100),
    },
    "lighting": {
        "rooms": ["<!" + OUT_LIGHT + ">dining room", "<!" + OUT_LIGHT + ",fan>entryway", "<!" + OUT_LIGHT + ">kitchen",
                  "<!" + OUT_LIGHT + ">living room", "<!" + OUT_LIGHT + ">bedroom", "<vanity,bath,sconce,flush>bathroom",
                  "<!" + OUT_LIGHT + ",lamp,fan>hallway", "<chandelier,pendant,flush>foyer", "<!" + OUT_LIGHT + ">home office",
                  "<chandelier,pendant,sconce>stairwell", "<" + OUT_LIGHT + ">porch", "<" + OUT_LIGHT + ">front entry",
                  "<" + OUT_LIGHT + ">garden path", "<" + OUT_LIGHT + ",outdoor ceiling fan>patio"],
        "open": [
            "Light up your {room} with {a_type} that makes a statement.",
            "<!fan>The right light changes everything, and this {type} proves it.",
            "<!fan,shade>Bring warm, even light to your {room} with this {type}.",
            "This {type} pairs {style} design with bright, practical light.",
            "Finished in {finish}, this {type} adds a touch of polish to any space.",
            "<!fan>Brighten dark corners and set the mood with this {type}.",
            "<!string,fan,shade,night>Crafted from {material}, this {type} glows as good as it looks.",
            "Good lighting makes a room feel bigger, warmer, and more inviting.",
            "<fan>Stay cool and well lit with this {type}.",
            "<" + OUT_LIGHT + ">Light the way to your front door with this {type}.",
            "Introducing the {name}.",
        ],
        "body": [
            "<!string,night,solar,shade>It is compatible with dimmer switches for full control over the mood.",
            "<lamp,drum,pendant,chandelier,sconce;!shade,desk>The shade diffuses light for a soft, even glow.",
            "<!led,integrated,string,solar,shade,night,track head,smart>Bulbs are not included; it takes standard E26 bulbs up to 60W each.",
            "<chandelier,pendant,ceiling fan;!flush>An adjustable downrod lets you set the height to suit your ceiling.",
            "<!string,night,shade>The frame is made of {material} with a hand-applied finish.",
            "<outdoor,bath,vanity,fan,path,deck,landscape,wall light,lantern,barn>It is UL listed for use in damp locations.",
            "<table lamp,floor lamp,desk lamp,plug-in,buffet,bedside,accent lamp,lamp set>The cord is 6 ft. long with an in-line switch.",
            "<pendant,chandelier,sconce,vanity,bath bar,flush;!drum>Seeded glass shades scatter light across the room.",
            "<chandelier,pendant,flush,sconce,vanity,bath bar,fan,outdoor wall,track,barn;!plug-in>Hardwire installation is required; we recommend a licensed electrician.",
            "<led,integrated>Integrated LEDs last up to 25,000 hours.",
            "<table lamp,floor lamp,desk lamp,buffet,bedside,accent lamp,tree,tripod,arched,torchiere>A weighted base keeps it steady.",
            "<fan>The reversible motor and three speeds keep air moving in every season.",
            "<solar>A built-in solar panel charges by day and turns the light on at dusk.",
            "<string,fairy>Shatterproof bulbs and a weatherproof cord make them safe for patios and porches.",
            "<shade>The shade is hand-stitched from {fabric} over a metal frame.",
            "<outdoor,motion,path,landscape,barn,lantern>A dusk-to-dawn sensor turns it on at night and off in the morning.",
            "<track>Each head swivels and tilts to aim light where you need it.",
            "<night light>A soft, warm glow lights the way without waking anyone.",
            "<shade>It fits most table and floor lamps with a standard harp.",
            "<shade>A washer fitter secures it to the lamp.",
            "<night light>A built-in light sensor turns it on at dusk.",
            "<night light>It plugs into any standard outlet without blocking the second one.",
            "<string,fairy>Strands connect end to end, so you can light a long patio or porch.",
            "<string,fairy>Commercial-grade cords are rated for year-round outdoor use.",
            "<outdoor,path,landscape,lantern,barn,deck light,well light,spot light,string,motion,solar>A weatherproof finish protects it from the elements.",
        ],
        "copy": [
            "<chandelier,pendant>Hang this {a}{run} over a dining table or kitchen island for a bright, welcoming glow.",
            "<!" + OUT_LIGHT + ",shade,fan>Flip the switch and this {a}{run} fills the room with warm light.",
            "<chandelier,pendant,flush,table lamp,floor lamp;!shade,lamp set>Pair this {a}{run} with matching sconces for a coordinated look.",
            "<path,pathway,landscape,solar,deck,well,spot>Line your walkway with this {a}{run} and welcome guests home.",
            "<outdoor wall,sconce,lantern,barn,motion>Hang this {a}{run} by the door and come home to a well-lit entry.",
            "<string,fairy>Drape this {a}{run} over the patio for instant ambiance.",
            "<fan>Install this {a}{run} in a bedroom or living room and stay comfortable all year.",
            "<shade>Top a favorite lamp with this {a}{run} for a fresh new look.",
        ],
        "close": ["<!led,integrated,string,solar,smart>Bulbs sold separately.", "<chandelier,pendant,flush,sconce,vanity,bath bar,fan,track>Installation required."],
        "adj": ["dimmable", "elegant", "stylish", "modern", "eye-catching", "classic"],
        "mats": ["metal", "<!shade,string,fairy>glass", "<!string,fairy,night>brass", "<!string,fairy,night,shade>iron",
                 "<pendant,lamp,chandelier,shade>rattan", "<chandelier,pendant,sconce,flush>crystal", "<lamp;!shade,floor>ceramic",
                 "<shade,drum>linen"],
        "dims": (5, 48, 5, 48, 8, 72),
    },
    "rugs": {
        "rooms": ["<doormat>front porch", "<doormat>entryway", "<doormat>mudroom", "<kitchen,anti-fatigue,comfort mat>kitchen",
                  "<kitchen,anti-fatigue>laundry room", "<runner,hallway>hallway", "<runner>entryway", "<runner>kitchen",
                  "<kids,play,nursery>nursery", "<kids,play>kids room", "<kids,play>playroom", "<outdoor>patio",
                  "<outdoor>deck", "<outdoor>porch",
                  "<rug;!outdoor,kids,nursery,runner,doormat,kitchen,play>living room",
                  "<rug;!outdoor,kids,nursery,runner,doormat,kitchen,play>bedroom",
                  "<rug;!outdoor,kids,nursery,runner,doormat,kitchen,play>dining room",
                  "<rug;!outdoor,kids,nursery,runner,doormat,kitchen,play>home office"],
        "open": [
            "<!pad>Ground your {room} with {a_type} that brings color and comfort underfoot.",
            "<!pad,doormat,kitchen mat,anti-fatigue,comfort>A great rug pulls a room together, and this {type} does it in style.",
            "<!pad>Soften hard floors with this {colour} {type}.",
            "<!pad>This {type} adds {style} character to any space.",
            "<!pad,anti-fatigue,comfort mat>Woven from {material}, this {type} is soft underfoot and built to last.",
            "<rug;!pad,doormat,kitchen,outdoor>Layer it, center it, or roll it out in a hallway: this {type} works anywhere.",
            "<!outdoor,doormat,pad>Looking to warm up your {room}? Start from the floor up.",
            "<!pad>Bold color and timeless pattern meet in this {type}.",
            "<doormat>Welcome guests with {a_type} that keeps dirt at the door.",
            "<pad>Keep your rug in place and your floors protected with this {type}.",
            "<pad>A good rug pad makes any rug feel plusher underfoot.",
            "<kitchen,anti-fatigue,comfort>Standing at the counter is easier on {a_type} like this.",
            "<pad>Stop your rug from slipping and bunching with this {type}.",
        ],
        "body": [
            "<!shag,pad>It has a low pile that stands up to heavy foot traffic.",
            "<!hand-tufted,hand-knotted,hand-woven,pad,coir,doormat,anti-fatigue,comfort mat,jute,sisal>It is power-loomed of {material} for a soft feel and lasting durability.",
            "<!pad,coir>The stain-resistant fibers make it a smart pick for homes with kids and pets.",
            "<!pad,doormat,kitchen mat,anti-fatigue,comfort mat,non-slip>Use a rug pad to keep it in place and extend its life.",
            "<wool,shag,tufted,jute,sisal>Some shedding is normal at first and will lessen with regular vacuuming.",
            "<!pad,anti-fatigue,comfort mat>A distressed, vintage-inspired design hides everyday wear.",
            "<hand-tufted,hand-knotted,hand-woven>Made by hand by skilled artisans, each rug is slightly different.",
            "<flatweave,reversible,outdoor,washable>The flat weave makes it reversible and easy to clean.",
            "<!washable>Spot clean with mild detergent and water.",
            "<!outdoor,doormat>It is safe for use over radiant-heated floors.",
            "<washable>Machine washable: just toss it in the wash.",
            "<outdoor,doormat>It is made to withstand rain, sun, and mildew, so you can leave it out all season.",
            "<coir,doormat>Coarse fibers scrape mud and dirt from shoes before they come inside.",
            "<anti-fatigue,comfort,kitchen mat,memory>Cushioned foam eases pressure on your feet, back, and knees.",
            "<pad>The felt and rubber construction grips both the floor and the rug.",
            "<kids,play,nursery>Made with non-toxic dyes, it is safe for little ones.",
        ],
        "copy": [
            "<!pad,doormat>Roll out this {a}{run} in your {room} for instant warmth.",
            "<rug;!runner,pad,doormat,kitchen,outdoor,kids>Under a coffee table or beside a bed, this {a}{run} ties the room together.",
            "<!pad>Durable and easy to clean, this {a}{run} is made for real life.",
            "<pad>Place this {a}{run} under your rug to stop slips and protect your floors.",
            "<doormat>Set this {a}{run} by the door and keep mud where it belongs.",
        ],
        "close": ["<!pad,doormat,kitchen,anti-fatigue,comfort>Rug pad sold separately.", "<!pad,coir>Vacuum regularly without the beater bar."],
        "adj": ["soft", "plush", "durable", "colorful", "versatile", "stylish"],
        "mats": ["<!pad,anti-fatigue,comfort>polypropylene", "<rug;!outdoor,pad,doormat,kitchen,anti-fatigue,comfort>wool",
                 "<rug,runner;!outdoor,pad,kitchen,anti-fatigue,comfort>jute", "<rug,runner,kitchen,kids,play;!outdoor,pad,anti-fatigue,comfort>cotton",
                 "<!pad,coir,anti-fatigue,comfort>polyester", "<rug;!outdoor,pad,doormat,kitchen,kids,play,anti-fatigue>viscose",
                 "<doormat>coir", "<doormat,anti-fatigue,comfort,pad>rubber", "<pad>felt", "<anti-fatigue,comfort,kitchen mat>PVC foam"],
        "dims": (24, 144, 36, 180, 0.2, 2),
    },
    "bedding": {
        "rooms": ["<kids,toddler>kids room", "<crib>nursery", "<!kids,toddler,crib>bedroom", "<!kids,toddler,crib>guest room",
                  "<!kids,toddler,crib>master suite", "<throw,blanket>living room"],
        "open": [
            "Dress your bed in soft, breathable comfort with this {type}.",
            "Nothing beats climbing into a freshly made bed.",
            "<!kids,toddler,crib>This {type} brings hotel-style comfort home.",
            "Refresh your {room} with {a_type} in {colour}.",
            "Made from {fabric}, this {type} gets softer with every wash.",
            "<throw,blanket,quilt,comforter,duvet>Cozy up in this {style} {type}.",
            "Layer on the comfort with {a_type} made for year-round use.",
            "<throw,blanket>Curl up on the sofa with this {type}.",
            "Introducing the {name}.",
        ],
        "body": [
            "<!electric,weighted>It is woven from {fabric} for a smooth, breathable feel.",
            "<duvet>Corner ties keep the comforter from shifting inside a duvet cover.",
            "<sheet,fitted>Deep pockets fit mattresses up to 16\" thick.",
            "It is OEKO-TEX certified, tested free of harmful substances.",
            "<!electric>Machine wash cold on a gentle cycle and tumble dry low.",
            "<comforter,quilt,weighted>Box stitching keeps the fill evenly distributed.",
            "<duvet,sham>Hidden button closures keep the insert in place.",
            "<comforter,down alternative>The hypoallergenic fill is a good choice for allergy sufferers.",
            "<!electric,weighted>Pre-washed for a relaxed, lived-in look.",
            "<comforter set,duvet cover set,quilt set,coverlet set,duvet set,bedspread>Shams are included with full, queen, and king sizes.",
            "<weighted>Glass beads are spread evenly in small pockets for gentle, even pressure.",
            "<electric>A dual-zone controller lets each side set its own warmth.",
            "<sheet set>The set includes a flat sheet, a fitted sheet, and two pillowcases.",
            "<skirt,ruffle>Split corners let the skirt fall neatly around footboards and posts.",
            "<throw,blanket;!weighted,electric>Fringed edges add a relaxed, handmade touch.",
            "<kids,toddler,crib>Fun, colorful prints make bedtime something to look forward to.",
            "<throw,blanket>It is sized to drape over a sofa or the end of a bed.",
            "<throw,blanket;!electric>Lightweight yet warm, it is perfect for year-round use.",
        ],
        "copy": [
            "<comforter,duvet,quilt,coverlet,bedspread>Layer this {a}{run} with throw pillows for a bed that looks styled and feels cozy.",
            "<!skirt,ruffle>Soft and breathable, this {a}{run} keeps you comfortable all night.",
            "<!electric,weighted>Wash after wash, this {a}{run} will only get softer.",
            "<throw,blanket;!electric>Drape this {a}{run} over the end of the bed or the back of a sofa.",
        ],
        "close": ["<!electric>Machine washable.", "Imported."],
        "adj": ["soft", "cozy", "breathable", "lightweight", "luxurious", "plush"],
        "mats": ["cotton", "microfiber", "linen", "polyester", "bamboo", "flannel"],
        "dims": (20, 110, 20, 110, 0.5, 4),
    },
    "soft_decor": {
        "rooms": ["<pillow,throw>living room", "<pillow,throw>bedroom", "<curtain,valance,shade,blind>living room",
                  "<curtain,valance,shade,blind>bedroom", "<curtain,valance,shade,blind>nursery", "<slipcover>living room",
                  "<slipcover>family room", "<tablecloth,runner,placemat,napkin>dining room",
                  "<tablecloth,runner,placemat,napkin,towel,apron,mitt>kitchen", "<pillow,throw>sunroom",
                  "<shade,blind,curtain>home office", "<outdoor>patio"],
        "open": [
            "<!blind,shade>Add a pop of color to your {room} with this {type}.",
            "Little touches make a big difference, like this {colour} {type}.",
            "<!blind,shade,towel,mitt,apron>This {type} brings texture and warmth to any space.",
            "Refresh your {room} for the season with this {style} {type}.",
            "<!blind,shade>Made from {fabric}, this {type} is soft, durable, and easy to care for.",
            "<pillow,throw,napkin,placemat,runner>Mix and match this {type} with your favorite patterns.",
            "<!towel,mitt,apron>A quick way to update a room? Start with {a_type}.",
            "Finish your {room} with {a_type} in {colour}.",
            "<slipcover>Give your furniture a second life with this {type}.",
            "<curtain,valance,shade,blind>Control light and privacy with this {type}.",
            "<tablecloth,runner,placemat,napkin>Set the table for everyday meals or special occasions with this {type}.",
        ],
        "body": [
            "<pillow;!insert,floor>It is made of {fabric} with a hidden zipper closure.",
            "<throw pillow,square pillow,lumbar pillow,floor pillow;!cover>The insert is filled with plump down alternative.",
            "<cover,curtain,tablecloth,runner,placemat,napkin,towel,apron,mitt,slipcover,throw;!pillow,blanket>Machine wash cold and line dry.",
            "<curtain,valance>Rod pocket and back tab construction make hanging easy.",
            "<!blind,shade,mitt>A woven texture adds depth without overwhelming a room.",
            "<pillow>Edges are finished with a neat knife-edge seam.",
            "<blackout,thermal>The blackout lining blocks up to 95% of light.",
            "<!blind,shade>Colorfast dyes keep it looking vibrant wash after wash.",
            "<pillow,panel;!pair,set>Sold individually.",
            "<curtain,tablecloth,runner,napkin,placemat,valance,towel>Iron on low heat if needed.",
            "<slipcover>Stretchy fabric hugs the shape of your furniture for a tailored fit.",
            "<slipcover>An elastic bottom and foam sticks keep it in place.",
            "<cordless,shade,blind>Cordless operation keeps cords out of reach of kids and pets.",
            "<shade,blind>It mounts inside or outside the window frame with the included brackets.",
            "<tablecloth,placemat,runner,napkin,slipcover>The fabric resists stains, so spills wipe right up.",
            "<towel,apron,mitt>Absorbent and quick-drying, it handles spills and wet dishes with ease.",
            "<mitt>Silicone grips and a quilted lining protect hands from hot pans.",
            "<outdoor>UV-resistant fabric holds its color in full sun.",
            "<throw;!pillow>Fringed edges add a relaxed, handmade touch.",
            "<shade,blind>The light-filtering fabric softens bright sun while keeping your view.",
            "<shade,blind>Wipe clean with a damp cloth.",
            "<blind>Tilt the slats to control light and privacy.",
        ],
        "copy": [
            "<pillow;!floor>Toss this {a}{run} on a sofa, chair, or bed for an instant update.",
            "<pillow,throw,napkin,placemat>Mix this {a}{run} with solids and stripes for a layered look.",
            "<!blind,shade>Soft and durable, this {a}{run} is made for everyday use.",
            "<curtain,valance,shade,blind>Hang this {a}{run} and enjoy softer light and more privacy.",
            "<slipcover>Slip this {a}{run} on and your furniture looks new again.",
            "<tablecloth,runner,placemat,napkin>Lay this {a}{run} on the table and dinner feels like an occasion.",
        ],
        "close": ["<pillow,panel;!pair,set>Sold individually.", "Imported."],
        "adj": ["soft", "decorative", "colorful", "cozy", "stylish"],
        "mats": ["cotton", "linen", "polyester", "velvet", "cotton blend"],
        "dims": (12, 100, 1, 100, 1, 108),
    },
    "wall_decor": {
        "rooms": ["living room", "bedroom", "entryway", "hallway", "dining room", "home office",
                  "<mirror,art,print,canvas,clock,shelf,hook;!floor,full length,leaner,cheval>bathroom", "nursery",
                  "<art,print,canvas,frame,mirror;!floor>stairwell"],
        "open": [
            "<!floor,full length,leaner,cheval,picture frame,photo frame>Fill a blank wall with this {type}.",
            "This {type} brings personality to your {room}.",
            "<art,print,canvas,painting,tapestry,hanging,mirror;!floor,full length,leaner,cheval,vanity,bathroom>Make a statement above the sofa or bed with this {style} {type}.",
            "<!floor,full length,leaner,cheval>Bare walls? This {type} is an easy fix.",
            "<mirror,framed,clock>Framed in {material}, this {type} adds a finished look to any space.",
            "Bring {style} charm to your {room} with this {type}.",
            "A well-chosen piece can change the feel of a whole room.",
            "Give your {room} a focal point with this {colour} {type}.",
            "<floor,full length,leaner,cheval>Check your outfit from head to toe with this {type}.",
            "<picture frame,photo,gallery frame,collage>Show off your favorite memories with this {type}.",
            "<wallpaper,mural>Transform a room in an afternoon with this {type}.",
            "<hook,key,organizer,coat>Keep your entryway organized with this {type}.",
        ],
        "body": [
            "<!wallpaper,mural,floor,full length,leaner,cheval>It arrives ready to hang with pre-installed hardware.",
            "<art,print,canvas,painting,tapestry,mural,wallpaper>The image is printed with fade-resistant inks.",
            "<framed,mirror,clock;!frameless>A solid {material} frame surrounds the piece.",
            "<canvas>It is printed on gallery-wrapped canvas stretched over a wood frame.",
            "<mirror>The beveled edge catches the light beautifully.",
            "<mirror,art,print,canvas;!round,sunburst,arch>Hang it vertically or horizontally.",
            "<art,print,painting>Each piece is printed and framed to order.",
            "Dust with a soft, dry cloth.",
            "<hook,key,organizer,coat>Keys, mail, and hats finally have a home.",
            "Made in the USA.",
            "<clock>A silent quartz movement keeps time without ticking.",
            "<floating>Hidden brackets make the shelf look like it floats on the wall.",
            "<shelf>Each shelf holds up to 25 lbs.",
            "<peel and stick>Easy to apply and remove, it leaves no residue behind.",
            "<wallpaper;!peel>Match the pattern carefully as you hang each strip.",
            "<mirror>A shatter-resistant safety backing adds peace of mind.",
            "<picture frame,photo frame,gallery frame,collage>Mats and a glass front are included.",
            "<macrame,woven>Woven by hand from soft cotton cord.",
        ],
        "copy": [
            "<mirror,art,print,canvas,clock,hook,key,coat;!floor,full length,leaner,cheval>Hang this {a}{run} above a console table to greet guests as they come in.",
            "<art,print,canvas,frame,painting,mirror;!floor,full length,leaner,cheval>Group this {a}{run} with other favorites for a gallery wall.",
            "<!floor,full length,leaner,cheval,frame>This {a}{run} makes any blank wall feel finished.",
            "<floor,full length,leaner,cheval>Lean this {a}{run} against a bedroom wall for a relaxed look.",
            "<shelf>Fill this {a}{run} with books, plants, and photos.",
        ],
        "close": ["<!wallpaper,mural,floor,full length,leaner,cheval>Hanging hardware included.", "<!wallpaper,mural>Ready to hang."],
        "adj": ["striking", "eye-catching", "decorative", "stylish", "elegant"],
        "mats": ["<mirror,clock,frame,shelf,hook,key,coat>wood", "<mirror,clock,frame,shelf,hook,key,coat,organizer>metal",
                 "<mirror,frame>resin", "<mirror,clock,shelf,hook,coat>iron", "<art,print,painting,canvas>canvas",
                 "<tapestry,hanging,macrame>cotton", "<wallpaper,mural>vinyl", "<wallpaper,mural>paper", "<art,decor>metal"],
        "dims": (8, 60, 1, 6, 8, 72),
    },
    "accents": {
        "rooms": ["living room", "<!tree,floor,wreath,garland>mantel", "entryway", "<!tree,floor,wreath,garland>bookshelf",
                  "<!tree,floor,wreath,garland>dining table", "bedroom", "<!tree,floor,wreath,garland>coffee table",
                  "<!tree,floor,wreath,garland>console table", "<wreath,garland>front door"],
        "open": [
            "Add a finishing touch to your {room} with this {type}.",
            "<!tree,floor plant,floor vase,wreath,garland>This {type} brings {style} charm to any shelf or tabletop.",
            "Small accents make a big impression, like this {colour} {type}.",
            "<!" + CANDLE + "," + FAUX + ">Crafted from {material}, this {type} adds texture and warmth.",
            "Looking for the perfect finishing touch? Try this {type}.",
            "Style your {room} with {a_type} that is simple and elegant.",
            "Bring a little life to your space with this {type}.",
            "The details make a home, and this {type} is a lovely one.",
            "<scented,jar candle,pillar,taper>Fill your home with a warm glow and a welcoming scent.",
            "<" + FAUX + ">Bring the outdoors in, without the upkeep.",
            "<wreath,garland>Welcome guests at the front door with this {type}.",
        ],
        "body": [
            "<!" + CANDLE + "," + FAUX + ">It is made of {material} with a hand-applied finish.",
            "<vase,holder,candlestick,figurine,sculpture,statue,bookend,box,tray,jar,urn,lantern>A felt-lined base protects furniture from scratches.",
            "<!flameless," + FAUX + ">Because it is handmade, slight variations make each one unique.",
            "Display it on its own or group it with other accents.",
            "<!" + CANDLE + "," + FAUX + ">Wipe clean with a soft, damp cloth.",
            "It is not intended for outdoor use.",
            "<vase,holder,candlestick,lantern,figurine,sculpture,statue,bookend,box,tray,jar,urn>The distressed finish gives it an aged, found-object look.",
            "<" + FAUX + ">Lifelike details make it hard to tell from the real thing.",
            "It makes a thoughtful housewarming gift.",
            "<" + FAUX + ">No watering needed.",
            "<scented,jar candle,pillar,taper candle>Hand-poured soy wax burns clean for up to 50 hours.",
            "<flameless>A built-in timer turns it on for six hours each evening.",
            "<tree,floor plant,in pot>The pot is weighted, so it stands steady.",
            "<" + FAUX + ">Bendable stems let you shape it just so.",
            "<jewelry box,jewelry organizer,watch box,decorative box>A lift-off lid reveals a velvet-lined interior.",
            "<tray>Raised edges keep remotes, keys, and candles from sliding off.",
            "<vase,jar,urn>Fill it with fresh or faux stems, or let it stand on its own.",
            "<candle,holder,lantern,candlestick;!flameless>Always burn candles within sight and away from drafts.",
        ],
        "copy": [
            "<!tree,floor,wreath,garland>Set this {a}{run} on a mantel, shelf, or side table for an easy update.",
            "This {a}{run} is a thoughtful gift for a new homeowner.",
            "<!candle,tree,floor,wreath,garland>Group this {a}{run} with candles and books for a styled vignette.",
            "<tree,floor plant,floor vase>Place this {a}{run} in an empty corner and watch the room come alive.",
            "<wreath,garland>Hang this {a}{run} on the front door and greet every guest in style.",
        ],
        "close": ["<!" + CANDLE + ">For decorative use only.", "Imported."],
        "adj": ["decorative", "charming", "elegant", "lovely"],
        "mats": ["<vase,jar,urn,holder,figurine,sculpture,statue,bookend,tray,dish,box>ceramic", "<vase,jar,holder,candlestick,lantern,hurricane,tray,dish>glass",
                 "<figurine,sculpture,statue,bookend,box,vase,urn>resin", "<holder,candlestick,lantern,sculpture,bookend,tray,box,organizer>metal",
                 "<tray,box,bookend,sculpture,holder,candlestick,organizer>wood", "<vase,jar,urn>stoneware", "<jewelry,watch>leather",
                 "<" + CANDLE + ">soy wax", "<" + FAUX + ">polyester", "<tree,plant in pot,in planter,in vase>plastic"],
        "dims": (2, 30, 2, 30, 2, 72),
    },
    "kitchen": {
        "rooms": ["kitchen", "<container,canister,jar,spice>pantry", "<board,block,utensil,knife,canister,crock,rack>countertop",
                  "<pan,skillet,pot,oven,braiser,cocotte,cookware,wok>stovetop"],
        "open": [
            "Cook like a pro with this {type}.",
            "Every kitchen needs a reliable {type}, and this one is built to last.",
            "<!spice,dish rack,drainer,container,canister,jar>From weeknight dinners to holiday feasts, this {type} is up to the task.",
            "<pan,skillet,pot,oven,braiser,cocotte,cookware,wok;!baking,cake,muffin,loaf,pie>Made of {material}, this {type} heats evenly and cleans up easily.",
            "Upgrade your kitchen essentials with this {colour} {type}.",
            "Home cooks and chefs alike will appreciate this {type}.",
            "<!container,canister,jar,spice,dish rack>Good tools make cooking a pleasure, and this {type} is one of them.",
            "<spice,container,canister,jar,rack,crock,organizer>Get organized and cook smarter with this {type}.",
            "<baking,bakeware,loaf,muffin,cake,pie>Bake like a pro with this {type}.",
        ],
        "body": [
            "<pan,skillet,pot,oven,braiser,cocotte,cookware,wok,bakeware,baking,loaf,muffin,cake,pie>It is made of {material} for even heating and long life.",
            "<pan,skillet,pot,cookware,wok,saucepan;!cast iron,baking,cake,muffin,loaf,pie>Stay-cool handles are riveted for strength.",
            "<pan,skillet,pot,oven,braiser,cocotte,cookware,wok,baking dish>It is oven safe to 500 degrees.",
            "<pan,skillet,pot,oven,braiser,cocotte,cookware,wok;!baking,cake,muffin,loaf,pie,sheet>It works on gas, electric, and induction cooktops.",
            "<nonstick>The nonstick surface releases food easily and cleans up fast.",
            "<!cast iron,knife,board,block,wood,bamboo,acacia,copper>Dishwasher safe, though hand washing is recommended.",
            "<cookware,saucepan,stock,pasta pot,with lid>Tempered glass lids let you check on food without lifting the lid.",
            "<knife>Full-tang blades are forged from high-carbon stainless steel.",
            "<pan,pot,cookware,nonstick,bakeware,skillet>It is free of PFOA, lead, and cadmium.",
            "<skillet,pan,board,spatula,ladle,whisk,tongs;!sheet,cake,muffin,loaf>Hang it by the loop handle to save cabinet space.",
            "<cast iron;!enameled>Cast iron comes pre-seasoned and gets better with every use.",
            "<enameled,dutch,cocotte,braiser>The enamel interior resists stains and never needs seasoning.",
            "<board,block,wood,bamboo,acacia,crock>Hand wash and oil now and then to keep the wood from drying out.",
            "<container,canister,jar,food storage>Airtight lids lock in freshness and stop leaks.",
            "<cutting board,butcher,chopping>A juice groove around the edge catches drips.",
            "<utensil,spatula,ladle,whisk,tongs,opener,cutter,spice,knife>It fits neatly in a drawer or on the counter.",
            "<utensil set,spatula,ladle,whisk,tongs>Heat-resistant silicone heads are safe on nonstick pans.",
            "<dish rack,drainer>The drip tray drains straight into the sink.",
            "<container,canister,spice jar,jar set,mason>Clear, stackable containers make it easy to see what you have.",
            "<baking,bakeware,loaf,muffin,cake,pie,sheet>Rolled edges resist warping, even at high heat.",
            "<baking,bakeware,loaf,muffin,cake,pie,sheet>Cakes and cookies release cleanly and bake evenly.",
            "<dish rack,drainer>A removable utensil cup keeps forks and knives sorted.",
            "<dish rack,drainer>A rust-resistant coating stands up to daily use.",
            "<utensil,spatula,ladle,whisk,tongs,opener,cutter>Comfortable, non-slip handles give you a secure grip.",
            "<utensil,spatula,ladle,whisk,tongs,opener,cutter;!wood,bamboo,acacia>Dishwasher safe for quick cleanup.",
            "<knife>Each knife is honed to a razor-sharp edge and balanced for control.",
            "<knife block>A hardwood block keeps blades sharp and within reach.",
            "<spice>It holds up to 20 standard spice jars.",
            "<spice>Labels are included so you can find every spice at a glance.",
            "<container>They are freezer, microwave, and dishwasher safe.",
        ],
        "copy": [
            "<!container,dish rack,drainer,spice>Use this {a}{run} every day and it will only get better with time.",
            "<pan,skillet,pot,oven,braiser,cocotte,cookware,wok;!baking,cake,muffin,loaf,pie,sheet>From searing to simmering, this {a}{run} handles it all.",
            "This {a}{run} makes a great gift for the cook in your life.",
            "<canister,jar,crock,spice,rack,block,utensil>Keep this {a}{run} on the counter and your favorites stay within reach.",
        ],
        "close": ["<!cast iron,knife,board,block,wood,copper>Dishwasher safe.", "Hand wash recommended."],
        "adj": ["versatile", "durable", "reliable", "essential"],
        "mats": ["<pan,skillet,pot,oven,cookware,wok,braiser,cocotte,saucepan,sheet,baking,knife,utensil,rack,canister,opener,cutter,tongs,whisk,ladle>stainless steel",
                 "<skillet,pan,oven,dutch,braiser,cocotte,wok;!sheet,cake,muffin,loaf,pie,crepe>cast iron",
                 "<pan,pot,cookware,sheet,baking,bakeware,loaf,muffin,cake>aluminum", "<board,block,utensil,crock,spice,rack,canister,spatula>bamboo",
                 "<board,block,utensil,crock>acacia", "<utensil,spatula,ladle,whisk,tongs,container,muffin,baking>silicone",
                 "<container,canister,jar,pie dish,baking dish>glass", "<canister,crock,jar,pie dish,baking dish>ceramic"],
        "dims": (2, 30, 2, 30, 1, 20),
    },
    "tabletop": {
        "rooms": ["dinner table", "kitchen", "dining room", "patio", "buffet"],
        "open": [
            "Set a beautiful table with this {type}.",
            "<plate,dinnerware,platter,bowl,place setting>Everyday meals feel special when served on {a_type} like this.",
            "This {type} brings {style} style to your table.",
            "Made from {material}, this {type} is sturdy enough for everyday use.",
            "Entertaining guests? This {type} is ready for the occasion.",
            "Mix and match this {colour} {type} with your favorite pieces.",
            "From brunch to dinner parties, this {type} does it all.",
            "<plate,dinnerware,bowl,place setting>Upgrade your dinnerware with this {type}.",
            "<glass,flute,tumbler>Raise a glass with this {type}.",
            "<mug,teacup>Start every morning right with this {type}.",
        ],
        "body": [
            "<!crystal,stainless,flatware,silverware,cutlery,wood,board,gold>It is dishwasher and microwave safe.",
            "<stoneware,ceramic,earthenware,porcelain,mug,plate,dinnerware,platter;!glass,crystal,flatware,melamine>The reactive glaze means no two pieces look exactly alike.",
            "<!flatware,silverware,cutlery>It is made of {material} that resists chips and scratches.",
            "<plate,bowl,dinnerware,mug,glass,tumbler;!wine,flute>Pieces stack neatly to save cabinet space.",
            "It is lead-free and food safe.",
            "<plate,dinnerware,bowl,platter>A wide rim frames each dish beautifully.",
            "<crystal,gold,hand-blown,wood>Hand wash to preserve the finish.",
            "<dinnerware set,place setting>Service for four includes dinner plates, salad plates, and bowls.",
            "<stoneware,ceramic,porcelain,earthenware,bone china,dinnerware,mug,plate;!glass,melamine>Each piece is fired at high temperatures for strength.",
            "<wine,flute,champagne>Thin rims and long stems let the wine's aroma come through.",
            "<tumbler,carafe,pitcher,highball,old fashioned,drinking glass,glassware>A weighted base keeps it from tipping.",
            "<flatware,silverware,cutlery>Forged from 18/10 stainless steel, it won't rust, bend, or pit.",
            "<pitcher,carafe,dispenser>A drip-free spout makes pouring neat.",
            "<mug,teacup>It holds 12 ounces of your favorite coffee or tea.",
            "<melamine>Shatter-resistant melamine is perfect for outdoor dining.",
            "<flatware,silverware,cutlery>Each place setting includes a dinner fork, salad fork, knife, spoon, and teaspoon.",
            "<flatware,silverware,cutlery>A mirror polish gives it a bright, classic shine.",
        ],
        "copy": [
            "Set this {a}{run} out for guests and watch it become a conversation piece.",
            "This {a}{run} makes a lovely wedding or housewarming gift.",
            "<!crystal,hand-blown>Durable and easy to clean, this {a}{run} is made for daily use.",
        ],
        "close": ["<set,pack,piece,setting>Sold as a set.", "<!set,pack,piece,setting>Sold individually.", "Imported."],
        "adj": ["elegant", "durable", "classic", "versatile", "beautiful"],
        "mats": ["<!flatware,silverware,cutlery,glass,flute,tumbler,carafe>porcelain", "<!flatware,silverware,cutlery,glass,flute,tumbler,carafe>stoneware",
                 "<!flatware,silverware,cutlery,glass,flute,tumbler,carafe>ceramic", "<glass,flute,tumbler,pitcher,carafe,bowl,dispenser>glass",
                 "<flatware,silverware,cutlery,pitcher,tray>stainless steel", "<plate,bowl,dinnerware,platter>melamine",
                 "<board,bowl,platter>acacia"],
        "dims": (2, 24, 2, 24, 1, 16),
    },
    "appliances": {
        "rooms": ["<!heater,fireplace,radiator,fan,vacuum>kitchen", "<!heater,fireplace,radiator,fan,vacuum>countertop",
                  "<heater,fireplace,radiator,fan>bedroom", "<heater,fan>home office", "<fireplace,fan,heater>living room",
                  "<vacuum>home", "<coffee,espresso,kettle,toaster>office break room"],
        "open": [
            "<coffee,espresso,frother,toaster,kettle,blender,french press,pour over,cold brew>Make mornings easier with this {type}.",
            "<slow,multi,pressure,toaster oven,air fryer,countertop oven,mixer>This {type} takes the guesswork out of everyday cooking.",
            "<slow,multi,pressure,air fryer,oven>Create delicious meals at the touch of a button with this {type}.",
            "<!heater,fireplace,radiator,fan,vacuum>Compact and powerful, this {type} fits neatly on your counter.",
            "<!heater,fireplace,radiator,fan,vacuum>Finished in {colour}, this {type} looks great on any countertop.",
            "<slow,multi,pressure>Prepare home-cooked meals on any schedule with this {type}.",
            "Small appliances should work hard and look good, and this {type} does both.",
            "<!heater,fireplace,radiator,fan,vacuum>Upgrade your countertop with this {style} {type}.",
            "<heater,fireplace,radiator>Stay warm and cozy all winter with this {type}.",
            "<fan>Beat the heat with this {type}.",
            "<vacuum>Keep floors spotless with less effort, thanks to this {type}.",
            "<mixer>Whip up cakes, cookies, and breads with ease.",
            "<blender>Blend smoothies, soups, and sauces in seconds.",
            "<fan>Keep air moving in any room with this {type}.",
            "<vacuum>Cleaning day just got easier with this {type}.",
            "<heater,fireplace,radiator>Take the chill out of any room with this {type}.",
        ],
        "body": [
            "<!french press,pour over,whistling,gooseneck,box fan,cold brew>Digital controls and an easy-read display make it simple to use.",
            "<!heater,fireplace,radiator,fan,vacuum,kettle>Removable parts are dishwasher safe.",
            "<slow,multi,pressure,toaster oven,countertop oven,air fryer,coffee maker,drip,electric kettle>A keep-warm setting holds food and drinks at serving temperature.",
            "<!french press,pour over,cold brew,whistling,gooseneck,hand mixer,box fan>Auto shut-off adds peace of mind.",
            "<!french press,pour over,whistling>It has a {material} housing that wipes clean.",
            "<!french press,pour over,whistling,gooseneck,cold brew,cordless,robot,handheld>The cord wraps neatly underneath for storage.",
            "<!heater,fireplace,radiator,fan,vacuum,kettle>Non-slip feet keep it steady on the counter.",
            "<slow,multi,pressure,air fryer,blender,mixer,oven>It comes with a recipe booklet to get you started.",
            "<!french press,pour over,cold brew,whistling,gooseneck>It is rated at {watts} watts.",
            "<heater,fireplace,radiator>Tip-over and overheat protection make it safe to leave on in a child's room.",
            "<tower,pedestal,table fan,floor fan>Oscillation spreads cool air across the whole room.",
            "<vacuum>A HEPA filter traps dust, pollen, and pet hair.",
            "<espresso>A 15-bar pump pulls rich, full-bodied shots.",
            "<toaster;!oven>Extra-wide slots fit bagels and thick-cut bread.",
            "<stand mixer,tilt-head>A stainless steel bowl and three attachments are included.",
            "<blender>Hardened steel blades crush ice and frozen fruit.",
            "<air fryer>Rapid air circulation crisps food with little or no oil.",
            "<whistling,tea kettle;!electric>The stovetop kettle whistles when the water is ready.",
            "<coffee maker,drip,single serve>Brew strength control lets you make it bold or mild.",
            "<fireplace>Realistic flame effects run with or without heat.",
            "<cordless,robot,handheld>Long battery life cleans the whole house on one charge.",
            "<kettle>A stay-cool handle and drip-free spout make pouring safe and easy.",
            "<kettle>It brings water to a boil in minutes.",
            "<fan>A quiet motor runs in the background without distraction.",
        ],
        "copy": [
            "<slow,multi,pressure,robot,air fryer>Set it and forget it: this {a}{run} does the work while you get on with your day.",
            "<!heater,fireplace,radiator,fan,vacuum>Easy to use and easy to clean, this {a}{run} earns its spot on the counter.",
            "<!heater,fireplace,radiator,fan,vacuum,coffee,espresso,frother>This {a}{run} makes a great gift for new cooks.",
            "<heater,fireplace,radiator,fan>Plug in this {a}{run} and feel the difference in minutes.",
            "<coffee,espresso,french press,pour over,cold brew,frother>Your morning cup tastes better from this {a}{run}.",
            "<vacuum>This {a}{run} makes quick work of crumbs, dust, and pet hair.",
        ],
        "close": ["1-year limited warranty.", "<!heater,fireplace,radiator,fan,vacuum,french press,kettle>Hand wash the base; do not immerse."],
        "adj": ["compact", "powerful", "versatile", "sleek"],
        "mats": ["stainless steel", "plastic", "glass", "die-cast aluminum"],
        "dims": (5, 24, 5, 24, 5, 24),
    },
    "fixtures": {
        "rooms": ["<" + BATH_PLUMB + ">bathroom", "<" + BATH_PLUMB + ">master bath", "<" + BATH_PLUMB + ">powder room",
                  "<kitchen,pot filler,bar faucet,range hood,bridge>kitchen", "<curtain,rod>living room",
                  "<curtain,rod,knob,lever,passage,privacy>bedroom", "<knob,lever,handleset,pull,mailbox,house number,address,plaque,entry,dummy>home",
                  "<pull,knob;!door,passage,privacy,entry,dummy>kitchen", "<mailbox,house number,address,handleset,entry>front entry"],
        "open": [
            "Update your {room} with this {type}.",
            "A new {type} can transform the look of your {room}.",
            "This {type} combines {style} design with everyday durability.",
            "<!toilet,sink,tub,vanity>Finished in {finish}, this {type} adds a polished touch.",
            "Built to last, this {type} is made of {material}.",
            "<!tub,vanity,toilet,sink>Give your {room} a fresh look without a full remodel.",
            "The right fixtures make a space feel finished, starting with this {type}.",
            "<knob,lever,pull,handleset,rod,entry,passage,privacy>The hardware has a rich heritage of delivering quality and value.",
            "<mailbox,house number,address,handleset,entry>Boost your curb appeal with this {type}.",
            "Introducing the {name}.",
        ],
        "body": [
            "<!toilet,tub,sink,vanity>It is made of {material} with a corrosion-resistant finish.",
            "<faucet,pot filler>Ceramic disc valves give drip-free performance.",
            "<!toilet,tub,sink>All mounting hardware is included.",
            "<toilet,tub,vanity,sink,faucet,hood,shower,warmer,filler>Professional installation is recommended.",
            "<faucet,shower,pot filler,towel warmer,knob,lever,pull,handleset,hood,rod>The finish resists fingerprints and water spots.",
            "<faucet,shower,toilet>It meets ADA and WaterSense guidelines.",
            "<toilet>A soft-close seat prevents slamming.",
            "<vanity>The solid wood cabinet has two doors and an adjustable shelf.",
            "Clean with mild soap and a soft cloth; avoid abrasive cleaners.",
            "<faucet,knob,lever,pull,passage,privacy>It fits standard pre-drilled holes.",
            "<pull down,kitchen faucet,pot filler;!bridge>A spray head switches between stream and spray at the touch of a button.",
            "<vanity>The countertop is engineered stone with a pre-drilled undermount sink.",
            "<shower>Five spray settings range from a gentle rain to a focused massage.",
            "<toilet;!seat>A dual-flush system saves water with every use.",
            "<tub,bathtub>Its deep basin makes for a long, relaxing soak.",
            "<kitchen sink,undermount kitchen,farmhouse,drop-in,double basin>Thick 16-gauge steel resists dents and dampens noise.",
            "<medicine>A mirrored door opens to adjustable glass shelves.",
            "<hood>Three fan speeds and LED lights keep your cooktop clear and bright.",
            "<knob,lever,handleset>It fits doors 1-3/8\" to 1-3/4\" thick.",
            "<rod>The rod extends to fit windows of different widths.",
            "<pull,knob;!door,passage,privacy,entry,dummy>Sold individually; screws included.",
            "<locking,mailbox>A locking door keeps your mail secure.",
            "<house number,address>Numbers are cut from solid aluminum and won't rust or fade.",
            "<warmer>It heats up in minutes and turns off automatically.",
            "<vessel,pedestal,undermount bathroom,console sink,wall mount sink>Its glazed surface resists stains and scratches.",
            "<vessel,pedestal,undermount bathroom,console sink,wall mount sink>An overflow drain helps prevent spills.",
            "<tub,bathtub>An integrated overflow and drain come pre-installed.",
        ],
        "copy": [
            "Install this {a}{run} and enjoy the difference every day.",
            "This {a}{run} is built to the same standards as fixtures costing twice as much.",
            "<!mailbox,house number,address>Paired with matching accessories, this {a}{run} completes the look.",
        ],
        "close": ["Lifetime limited warranty.", "<!toilet,tub,sink>Installation hardware included."],
        "adj": ["durable", "elegant", "modern", "classic", "sleek"],
        "mats": ["<faucet,shower,knob,lever,pull,handleset,rod,filler,warmer,house number,mailbox,entry,passage,privacy>solid brass",
                 "<faucet,sink,hood,shower,pull,mailbox,warmer,rod>stainless steel", "<knob,lever,pull,handleset,mailbox,passage,privacy>zinc",
                 "<toilet,sink;!kitchen>vitreous china", "<tub,bathtub,shower>acrylic", "<vanity,medicine>solid wood",
                 "<rod,house number,mailbox,address>iron", "<kitchen sink,farmhouse>fireclay", "<tub,bathtub>cast iron"],
        "dims": (2, 72, 2, 36, 2, 80),
    },
    "bath": {
        "rooms": ["bathroom", "guest bath", "powder room", "master bath", "kids bathroom", "<hamper,sorter>laundry room"],
        "open": [
            "Bring spa-like comfort to your {room} with this {type}.",
            "Small updates make a big difference in the bathroom, like this {type}.",
            "This {type} brings {style} style to your {room}.",
            "<towel,washcloth,bath rug,bath mat,contour,runner,bath sheet;!bar,ring,rack,warmer,stand>Made of {material}, this {type} is soft, absorbent, and quick to dry.",
            "<!towel,washcloth,bath sheet,rug,mat,shower curtain,contour,runner>Keep your {room} neat and organized with this {type}.",
            "Refresh your {room} with {a_type} in {colour}.",
            "A well-appointed bath starts with details like this {type}.",
            "Treat yourself to a little everyday luxury.",
            "<hamper,sorter>Laundry day is easier with this {type}.",
        ],
        "body": [
            "<towel,washcloth,bath rug,bath mat,contour,runner,bath sheet;!bar,ring,rack,warmer,stand>It is made of {material} for lasting softness.",
            "<rug,mat,contour,runner>The non-slip backing keeps it firmly in place.",
            "<towel,washcloth,rug,mat,contour,runner,sheet,shower curtain;!bar,ring,rack,stand,liner>Machine wash warm and tumble dry low.",
            "<bar,ring,rack,hook,holder,caddy,stand>Rust-resistant hardware makes it a good fit for humid bathrooms.",
            "<bar,ring,hook,wall mounted>Mounting hardware is included.",
            "<shower curtain;!liner>The water-repellent fabric dries quickly.",
            "<shower curtain,liner>Weighted hems help it hang straight.",
            "<over-the-toilet,over the toilet,space saver>It fits neatly over a standard toilet.",
            "<bar,ring,rack,holder,caddy,hook,stand,dispenser,tumbler,soap>The finish resists rust and water spots.",
            "<towel,washcloth,sheet;!bar,ring,rack,stand>Zero-twist cotton loops are plush, absorbent, and fast drying.",
            "<shower curtain set,with hooks>Twelve rust-proof hooks are included.",
            "<cabinet,over-the-toilet,over the toilet,space saver,linen>Adjustable shelves hold extra towels and toiletries.",
            "<hamper,sorter>A removable liner bag lifts out for trips to the laundry room.",
            "<accessory set>A pump dispenser, toothbrush holder, and soap dish coordinate for a neat look.",
            "<memory foam>Memory foam cushions every step.",
            "<tension>The spring-loaded pole fits ceilings from 5 to 9 feet.",
            "<accessory set,dispenser,toothbrush,tumbler,soap>Each piece has a non-slip base that keeps it steady on the counter.",
            "<cabinet,over-the-toilet,over the toilet,space saver>Doors open to reveal hidden storage for extra toiletries.",
            "<cabinet,over-the-toilet,over the toilet,space saver>Anti-tip hardware keeps it secure against the wall.",
            "<hamper,sorter>Cutout handles make it easy to carry to the laundry room.",
            "<hamper,sorter>A breathable weave keeps damp clothes from getting musty.",
            "<shower curtain;!liner>Reinforced buttonholes resist tearing.",
            "<shower curtain,liner>It fits standard 72\" x 72\" showers.",
            "<caddy>Deep baskets hold tall bottles, with hooks for razors and loofahs.",
            "<paper holder>It holds a standard or mega roll.",
            "<bar,ring,rack,stand,holder,hook>Concealed screws give it a clean, seamless look.",
        ],
        "copy": [
            "<towel,shower curtain,robe,bar,ring;!set,warmer,rack,stand>Hang this {a}{run} by the tub and enjoy a little spa at home.",
            "<over-the-toilet,over the toilet,space saver,caddy,wall,cabinet,bar,ring,rack>This {a}{run} adds storage without taking up floor space.",
            "<towel,washcloth,rug,mat,sheet;!bar,ring,rack,stand>Soft and absorbent, this {a}{run} makes every morning a bit nicer.",
            "<hamper,sorter>Tuck this {a}{run} in a corner and laundry day gets easier.",
            "<accessory,dispenser,holder,tumbler,soap,tray,caddy>This {a}{run} keeps counters clear and essentials in reach.",
            "<shower curtain>Hang this {a}{run} and give the whole bathroom a fresh look.",
        ],
        "close": ["<towel,washcloth,rug,mat,sheet,shower curtain,hamper;!bar,ring,rack>Machine washable.", "<bar,ring,hook,holder,rack,wall>Hardware included."],
        "adj": ["absorbent", "plush", "practical", "stylish", "space-saving"],
        "mats": ["<towel,washcloth,rug,mat,contour,runner,sheet;!bar,ring,rack,stand>cotton", "<towel,rug,mat,contour;!bar,ring,rack,stand>microfiber",
                 "<bar,ring,rack,hook,holder,caddy,stand,warmer>stainless steel", "<cabinet,over,space saver,hamper,bath mat,accessory,tray,caddy>bamboo",
                 "<shower curtain,liner,hamper,sorter>polyester", "<accessory,dispenser,tumbler,soap,tray>ceramic",
                 "<cabinet,over,space saver>manufactured wood", "<hamper>seagrass"],
        "dims": (4, 72, 2, 40, 2, 72),
    },
    "storage": {
        "rooms": ["<closet,garment,clothing,shoe,under bed>closet", "<closet,garment,clothing,under bed>bedroom",
                  "<coat,hall tree,umbrella,shoe,bench>entryway", "<coat,hall tree,shoe>mudroom",
                  "<garage,tool,workbench,pegboard,bike,utility,shelving,wire>garage", "<laundry,ironing,drying>laundry room",
                  "<toy,cube,basket,bin>kids room", "<basket,bin,cube,drawer,cart>playroom",
                  "<desk,file,letter,magazine>home office", "<basket,bin,cart,utility,storage rack>pantry",
                  "<magazine,newspaper,basket>living room"],
        "open": [
            "Get organized with this {type}.",
            "Clutter doesn't stand a chance against this {type}.",
            "This {type} keeps everyday essentials neat and easy to find.",
            "Made of {material}, this {type} is sturdy enough for daily use.",
            "Make the most of every inch of your {room} with this {type}.",
            "<shelf,shelving,rack,cube,cart,cabinet,basket,bin,drawer;!shoe,garment,clothing,coat,magazine,newspaper,ironing,drying,bike>From shoes to toys to tools, this {type} holds it all.",
            "Bring order to your {room} with {a_type} in {colour}.",
            "Smart storage starts with this {type}.",
            "<shoe>Give every pair a place with this {type}.",
            "<coat,hall tree,umbrella stand>Hang up coats, bags, and hats the moment you walk in.",
        ],
        "body": [
            "It is made of {material} with a durable finish.",
            "<shelf,shelving,closet,cabinet,cube,rack;!drying,garment,clothing,coat,magazine,newspaper,bike>Adjustable shelves adapt to items of different sizes.",
            "<wall,pegboard,closet system,over the door>Wall-mounting hardware is included.",
            "<shelf,shelving,utility,storage rack,wire;!drying>Each shelf holds up to {cap} lbs.",
            "<basket,bin,box,bag,cube>Handles on each side make it easy to carry.",
            "<bag,bin,drying,ironing,storage cube;!wicker>It folds flat for storage when not in use.",
            "<rolling,cart,garment,clothing,tool chest,workbench>Locking casters let you move it easily and keep it in place.",
            "<shelving,cube,rack,cart,organizer,drawers;!workbench,cabinet,garage>No tools needed for assembly.",
            "<rack,shelving,cart,garment,clothing,wire,bike,tool,coat>The powder-coated frame resists rust and scratches.",
            "<cube;!desk,file,letter,shoe organizer,door>Fabric bins pull out for easy access.",
            "<basket,wicker;!laundry>Hand-woven from natural fibers, each basket is slightly different.",
            "<bench>A padded seat gives you a place to sit while you put on shoes.",
            "<under bed>Clear windows let you see what is stored inside.",
            "<workbench,tool>A heavy-duty steel top holds up to 500 lbs.",
            "<closet,garment,clothing>Dual hanging rods double your closet space.",
            "<desk,file,letter>Stackable trays keep papers sorted and your desk clear.",
            "<ironing>The board folds flat and hangs on the included hook.",
            "<shoe>Each tier holds up to four pairs of shoes.",
            "<shoe>Slanted shelves make it easy to see every pair.",
            "<garage,tool,workbench,pegboard,bike,shelving>Heavy-gauge steel stands up to tools, paint cans, and sports gear.",
            "<drawer,cart>Smooth-gliding drawers pull out for easy access.",
            "<under bed>A zippered lid keeps out dust.",
            "<under bed>Reinforced handles make it easy to slide out.",
            "<basket,bin>It is sized to fit standard cube shelving.",
            "<basket,bin>A sturdy frame keeps its shape, even when full.",
            "<magazine,newspaper>It keeps magazines, newspapers, and mail neat.",
            "<coat,hall tree,umbrella>Hooks at different heights hold coats, bags, and scarves.",
        ],
        "copy": [
            "<shoe,coat,hall tree,bench,umbrella>Put this {a}{run} by the door and end the morning hunt for keys and shoes.",
            "This {a}{run} helps you reclaim your {room}.",
            "Sturdy and simple, this {a}{run} makes tidying up easy.",
            "<basket,bin,cube,box,magazine>Fill this {a}{run} with blankets, toys, or magazines.",
        ],
        "close": ["<!basket,bin,bag>Assembly required.", "Contents not included."],
        "adj": ["space-saving", "sturdy", "practical", "versatile", "handy"],
        "mats": ["<rack,shelving,shelf,cart,garage,tool,workbench,pegboard,bike,closet,wire,ironing,drying,garment,clothing>steel",
                 "<cube,closet,cabinet,shoe,coat,hall tree,drawer,desk,magazine,chest>manufactured wood",
                 "<shoe,basket,bin,desk,cube,drying,magazine>bamboo", "<basket>wicker", "<basket,bin,bag,cube,under bed,organizer>fabric",
                 "<bin,drawer,box,under bed,cart>plastic", "<coat,hall tree,shoe,bench,magazine,cube>solid wood",
                 "<basket,bin>seagrass"],
        "dims": (8, 72, 8, 24, 8, 84),
    },
}

# ---------------------------------------------------------------------------------------------------------
# Product classes
# ---------------------------------------------------------------------------------------------------------
# (product_class, category hierarchy, family, types, name slots, suffixes, weight)
# types: "a|b" product types; slots: "key:p key:p" (vocabulary key from V, or "collection"; p = chance of use);
# suffixes: "text:p; text:p".

F = "Furniture"
LR = F + " / Living Room Furniture"
BR = F + " / Bedroom Furniture"
KD = F + " / Kitchen & Dining Furniture"
OF = F + " / Office Furniture"
OUT = "Outdoor"
LT = "Lighting"
RG = "Rugs"
BD = "Bed & Bath / Bedding"
BA = "Bed & Bath / Bathroom Accessories & Organization"
DP = "Décor & Pillows"
KT = "Kitchen & Tabletop"
ST = "Storage & Organization"
HI = "Home Improvement"
BK = "Baby & Kids"

CLASS_TABLE = [
    # living room seating
    ("Sofas", LR + " / Sofas", "seating", "sofa|sofa|couch", "collection:.35 seatwidth:.25 style:.2 fabric:.45",
     "with reversible cushions:.04", 3),
    ("Sectionals", LR + " / Sectionals", "seating", "sectional|sectional|reversible sectional|sleeper sectional",
     "collection:.35 seatwidth:.3 fabric:.3 colour:.15", "with ottoman:.1; with chaise:.1", 2.5),
    ("Loveseats", LR + " / Sofas & Loveseats / Loveseats", "seating", "loveseat|reclining loveseat",
     "collection:.35 seatwidth:.2 fabric:.5 colour:.15", "", 1.5),
    ("Futons", LR + " / Futons", "seating", "futon|convertible futon|futon and mattress", "collection:.3 fabric:.3 colour:.2", "", 0.8),
    ("Sleeper Sofas", LR + " / Sofas / Sleeper Sofas", "seating", "sleeper sofa|sofa bed", "collection:.35 bedsize:.3 fabric:.4",
     "", 0.8),
    ("Accent Chairs", LR + " / Chairs & Seating / Accent Chairs",
     "seating", "armchair|accent chair|side chair|barrel chair|wingback chair|slipper chair|club chair",
     "collection:.35 style:.25 colour:.2 fabric:.45", "", 3),
    ("Recliners", LR + " / Chairs & Seating / Recliners", "seating",
     "recliner|power recliner|rocker recliner|wall hugger recliner|lift chair recliner",
     "collection:.3 fabric:.5 colour:.2", "", 1.6),
    ("Rocking Chairs", LR + " / Chairs & Seating / Rocking Chairs", "seating", "rocking chair|glider|rocker",
     "collection:.3 style:.3 wood:.3 fabric:.2", "", 0.6),
    ("Chaise Lounge Chairs", LR + " / Chairs & Seating / Chaise Lounge Chairs", "seating",
     "chaise lounge|chaise", "collection:.35 style:.2 fabric:.5", "", 0.7),
    ("Ottomans & Poufs", LR + " / Ottomans & Poufs", "seating",
     "ottoman|storage ottoman|cocktail ottoman|pouf|cube ottoman|footstool",
     "collection:.3 shape:.3 colour:.25 fabric:.45", "", 2),
    ("Bean Bag Chairs", LR + " / Chairs & Seating / Bean Bag Chairs", "seating", "bean bag chair|bean bag lounger",
     "colour:.4 fabric:.4", "", 0.5),
    ("Benches", BR + " / Benches", "seating", "upholstered bench|bench|storage bench|bed bench",
     "collection:.3 style:.3 fabric:.3 wood:.2", "", 1),
    ("Dining Chairs", KD + " / Dining Chairs", "seating",
     "dining chair|side chair|upholstered dining chair|arm chair|windsor back side chair|parsons chair",
     "collection:.3 packs:.25 style:.3 wood:.3 fabric:.25", "", 3),
    ("Bar Stools", KD + " / Bar Furniture / Bar Stools", "seating",
     "bar stool|counter stool|swivel bar stool|counter height bar stool|adjustable height swivel stool",
     "collection:.3 height:.35 style:.2 metal:.25 fabric:.2", "", 3),
    ("Office Chairs", OF + " / Office Chairs", "seating",
     "office chair|task chair|executive chair|ergonomic office chair|mesh task chair|drafting chair",
     "collection:.2 colour:.3 fabric:.3", "", 2),
    ("Gaming Chairs", OF + " / Gaming Chairs", "seating", "gaming chair|racing gaming chair|reclining gaming chair",
     "colour:.5 fabric:.3", "", 0.6),
    ("Massage Chairs", LR + " / Chairs & Seating / Massage Chairs", "seating",
     "massage chair|zero gravity massage chair|power reclining heated massage chair", "collection:.2 colour:.4", "", 0.4),
    ("Kids Chairs", BK + " / Kids Furniture / Kids Chairs", "seating",
     "kids chair|kids club chair|kids recliner|kids desk chair|kids armchair", "toddler:.3 colour:.4 fabric:.3",
     "", 0.5),
    ("Nursery Gliders", BK + " / Nursery Furniture / Gliders", "seating", "glider|swivel glider|glider and ottoman",
     "collection:.3 fabric:.4 colour:.3", "", 0.4),
    # tables
    ("Coffee Tables", LR + " / Coffee Tables & End Tables / Coffee Tables", "tables",
     "coffee table|coffee table|cocktail table|lift top coffee table|sled coffee table|trestle coffee table",
     "collection:.3 style:.35 shape:.2 wood:.35 stone:.12", "with storage:.12; with tray top:.03", 3),
    ("End Tables", LR + " / Coffee Tables & End Tables / End Tables", "tables",
     "end table|side table|c table|tray table|pedestal end table|pedestal side table",
     "collection:.3 style:.3 shape:.15 wood:.3 metal:.15", "with storage:.1", 3),
    ("Console Tables", LR + " / Console Tables", "tables", "console table|sofa table|entryway table",
     "collection:.3 tablewidth:.25 style:.3 wood:.35 metal:.1", "", 2),
    ("Dining Tables", KD + " / Kitchen & Dining Tables", "tables",
     "dining table|trestle dining table|pedestal dining table|extendable dining table|drop leaf dining table",
     "collection:.3 tablewidth:.2 style:.3 shape:.25 wood:.35", "", 2.6),
    ("Dining Table Sets", KD + " / Kitchen & Dining Sets", "tables",
     "dining set|breakfast dining set|pub table set|counter height dining set|extendable dining set",
     "collection:.4 pieces:.9 style:.15 wood:.2", "", 2.4),
    ("Pub Tables", KD + " / Bar Furniture / Pub Tables", "tables", "pub table|counter height table|bar table",
     "collection:.3 shape:.3 wood:.3", "", 0.6),
    ("Desks", OF + " / Desks", "tables",
     "desk|writing desk|computer desk|l-shaped desk|executive desk|secretary desk|floating desk",
     "collection:.35 style:.3 wood:.3 metal:.1", "with hutch:.08; with drawers:.08", 2.4),
    ("Standing Desks", OF + " / Desks / Standing Desks", "tables", "standing desk|height adjustable standing desk|desk converter",
     "tablewidth:.3 colour:.3 wood:.2", "", 0.8),
    ("Nesting Tables", LR + " / Coffee Tables & End Tables / Nesting Tables", "tables",
     "nesting table set|nesting coffee table set|nesting end table set", "smallpieces:.4 style:.3 wood:.3 metal:.2", "", 0.5),
    ("Vanities", BR + " / Makeup Vanities", "tables", "makeup vanity|vanity set|vanity desk",
     "collection:.3 colour:.3 wood:.2", "with mirror:.3; with stool:.1", 0.7),
    ("Kids Desks", BK + " / Kids Furniture / Kids Desks", "tables", "kids desk|kids table and chair set|art table",
     "toddler:.2 pieces:.2 colour:.3 wood:.3", "", 0.5),
    ("Card Tables", KD + " / Game Tables / Card Tables", "tables", "card table|game table|poker table",
     "collection:.3 shape:.3 wood:.3", "", 0.3),
    # casegoods
    ("Nightstands", BR + " / Nightstands", "casegoods", "nightstand|bedside table|nightstand|end table",
     "collection:.35 style:.35 colour:.15 wood:.35 drawers:.3", "with charging station:.05", 3),
    ("Dressers & Chests", BR + " / Dressers & Chests", "casegoods", "dresser|double dresser|chest|standard dresser|lingerie chest",
     "collection:.35 drawers:.6 style:.25 wood:.3", "", 3),
    ("Armoires & Wardrobes", BR + " / Armoires & Wardrobes", "casegoods", "armoire|wardrobe|wardrobe armoire",
     "collection:.35 doors:.3 style:.25 wood:.3", "", 0.9),
    ("Bookcases", LR + " / Bookcases", "casegoods",
     "bookcase|etagere bookcase|ladder bookcase|standard bookcase|cube bookcase|corner bookcase",
     "collection:.35 shelves:.3 style:.25 wood:.3 metal:.1", "", 2.2),
    ("TV Stands & Entertainment Centers", LR + " / TV Stands & Entertainment Centers", "casegoods",
     "tv stand|entertainment center|media console|media cabinet",
     "collection:.35 tvwidth:.3 style:.3 wood:.3", "with fireplace:.08", 2.4),
    ("Accent Chests & Cabinets", LR + " / Accent Chests & Cabinets", "casegoods",
     "accent cabinet|accent chest|storage cabinet|credenza|apothecary cabinet",
     "collection:.35 doors:.25 style:.3 wood:.3", "", 2),
    ("Sideboards & Buffets", KD + " / Sideboards & Buffets", "casegoods", "sideboard|buffet table|server|sideboard buffet",
     "collection:.35 tvwidth:.15 style:.35 wood:.35", "", 1.6),
    ("China Cabinets", KD + " / China Cabinets", "casegoods", "china cabinet|curio cabinet|lighted china cabinet",
     "collection:.35 style:.3 wood:.3", "", 0.6),
    ("Kitchen Islands & Carts", KD + " / Kitchen Islands & Carts", "casegoods",
     "kitchen island|kitchen cart|rolling kitchen cart|kitchen island with stools",
     "collection:.3 style:.3 wood:.3 stone:.1", "", 1.2),
    ("Bakers Racks", KD + " / Bakers Racks", "casegoods", "bakers rack|microwave cart|kitchen storage rack",
     "collection:.2 tiers:.4 metal:.3 wood:.2", "", 0.7),
    ("Bar Carts", KD + " / Bar Furniture / Bar Carts", "casegoods", "bar cart|serving cart|rolling bar cart",
     "collection:.3 tiers:.3 style:.2 metal:.4", "", 0.8),
    ("Wine Racks", KD + " / Bar Furniture / Wine Racks", "casegoods", "wine rack|floor wine rack|wine cabinet|tabletop wine rack",
     "collection:.3 metal:.3 wood:.3", "", 0.7),
    ("Filing Cabinets", OF + " / Filing Cabinets", "casegoods", "filing cabinet|lateral filing cabinet|vertical filing cabinet|mobile file cabinet",
     "drawers:.6 colour:.3 wood:.2", "", 0.8),
    ("Changing Tables", BK + " / Nursery Furniture / Changing Tables", "casegoods", "changing table|changing dresser|changing table topper",
     "collection:.3 drawers:.3 colour:.3 wood:.2", "", 0.4),
    ("Toy Chests", BK + " / Kids Storage / Toy Boxes", "casegoods", "toy box|toy chest|toy organizer|toy storage bench",
     "toddler:.3 colour:.4 wood:.3", "", 0.5),
    ("Pantry Cabinets", KD + " / Kitchen Pantry", "casegoods", "kitchen pantry|pantry cabinet|tall storage cabinet|kitchen hutch",
     "collection:.3 doors:.3 style:.3 colour:.2", "", 1),
    ("Jewelry Armoires", BR + " / Jewelry Armoires", "casegoods", "jewelry armoire|mirrored jewelry armoire|wall mounted jewelry armoire",
     "colour:.4 wood:.3", "with mirror:.3", 0.6),
    # beds
    ("Beds", BR + " / Beds & Headboards / Beds", "beds",
     "platform bed|bed|upholstered bed|panel bed|sleigh bed|canopy bed|storage bed|four poster bed|solid wood platform bed",
     "collection:.4 bedsize:.45 style:.2 wood:.25 fabric:.2", "with storage:.06; with headboard:.06", 4),
    ("Headboards", BR + " / Beds & Headboards / Headboards", "beds",
     "headboard|panel headboard|upholstered headboard|wingback headboard|slat headboard",
     "collection:.35 bedsize:.5 fabric:.3 wood:.15", "", 1.6),
    ("Daybeds", BR + " / Beds & Headboards / Daybeds", "beds", "daybed|daybed with trundle|metal daybed",
     "collection:.35 bedsize:.3 style:.2 metal:.2 wood:.2", "", 0.9),
    ("Bunk Beds", BK + " / Kids Beds / Bunk & Loft Beds", "beds",
     "bunk bed|twin over full bunk bed|twin over twin bunk bed|loft bed|l-shaped bunk bed",
     "collection:.35 wood:.3 metal:.2 colour:.2", "with trundle:.1; with drawers:.1; with desk:.05", 1.2),
    ("Bed Frames", BR + " / Beds & Headboards / Bed Frames", "beds", "bed frame|metal bed frame|adjustable bed base|platform bed frame",
     "bedsize:.6 metal:.3", "", 0.9),
    ("Cribs", BK + " / Nursery Furniture / Cribs", "beds", "convertible crib|crib|3 in 1 convertible crib|mini crib",
     "collection:.4 colour:.3 wood:.2", "", 0.6),
    ("Bassinets", BK + " / Nursery Furniture / Bassinets", "beds", "bassinet|bedside bassinet|bassinet and cradle",
     "colour:.4 wood:.3", "", 0.3),
    # sleep
    ("Mattresses", BR + " / Mattresses & Foundations / Mattresses", "sleep",
     "mattress|hybrid mattress|memory foam mattress|innerspring mattress|gel memory foam mattress|latex mattress",
     "bedsize:.6 collection:.15", "", 2),
    ("Mattress Toppers", BD + " / Mattress Pads & Toppers", "sleep",
     "mattress topper|memory foam mattress topper|gel mattress topper|down alternative mattress topper|mattress pad",
     "bedsize:.6", "", 1),
    ("Bed Pillows", BD + " / Bed Pillows", "sleep",
     "bed pillow|memory foam pillow|down pillow|down alternative pillow|cooling pillow|body pillow",
     "bedsize:.3 packs:.3", "", 1.4),
    ("Mattress Protectors", BD + " / Mattress Pads & Toppers / Mattress Protectors", "sleep",
     "mattress protector|waterproof mattress protector|zippered mattress encasement", "bedsize:.6", "", 0.6),
    # outdoor furniture
    ("Patio Conversation Sets", OUT + " / Patio Furniture / Patio Conversation Sets", "outdoor",
     "patio conversation set|rattan sofa seating group|sectional seating group|patio furniture set|conversation set|"
     "patio furniture|patio furniture",
     "collection:.4 pieces:.8 outdoor:.4", "with cushions:.35", 3),
    ("Patio Dining Sets", OUT + " / Patio Furniture / Patio Dining Sets", "outdoor",
     "patio dining set|outdoor dining set|bistro set|patio bar set|dining set",
     "collection:.35 pieces:.8 outdoor:.4", "with cushions:.2; with umbrella:.08", 2.4),
    ("Patio Sofas", OUT + " / Patio Furniture / Patio Seating / Patio Sofas", "outdoor",
     "patio sofa|outdoor sofa|patio sectional|outdoor loveseat|patio daybed", "collection:.35 outdoor:.4",
     "with cushions:.4", 1.5),
    ("Outdoor Lounge Chairs", OUT + " / Patio Furniture / Patio Seating / Patio Chairs", "outdoor",
     "patio chair|outdoor lounge chair|chaise lounge|reclining chaise lounge|egg chair|zero gravity chair",
     "collection:.3 packs:.2 outdoor:.45", "with cushion:.35", 2.4),
    ("Adirondack Chairs", OUT + " / Patio Furniture / Patio Seating / Adirondack Chairs", "outdoor",
     "adirondack chair|folding adirondack chair|plastic adirondack chair", "collection:.25 packs:.2 outdoor:.4 colour:.3",
     "", 1),
    ("Patio Dining Chairs", OUT + " / Patio Furniture / Patio Seating / Patio Dining Chairs", "outdoor",
     "patio dining chair|stacking patio dining chair|patio dining armchair|outdoor bar stool",
     "collection:.3 packs:.35 outdoor:.4", "with cushions:.3", 1.4),
    ("Patio Tables", OUT + " / Patio Furniture / Patio Tables", "outdoor",
     "patio dining table|outdoor coffee table|patio side table|bistro table|outdoor bar table",
     "collection:.3 shape:.35 outdoor:.45", "", 1.4),
    ("Porch Swings", OUT + " / Patio Furniture / Porch Swings", "outdoor",
     "porch swing|hanging porch swing|patio swing|canopy swing|swing chair with stand", "collection:.25 outdoor:.4",
     "", 0.5),
    ("Garden Benches", OUT + " / Patio Furniture / Patio Seating / Garden Benches", "outdoor",
     "garden bench|outdoor bench|park bench|storage bench", "collection:.25 outdoor:.45", "", 0.6),
    ("Hammocks", OUT + " / Patio Furniture / Hammocks", "outdoor", "hammock|hammock with stand|hammock chair|camping hammock",
     "colour:.4 fabric:.2", "", 0.5),
    ("Outdoor Cushions", OUT + " / Patio Furniture / Outdoor Cushions & Pillows", "outdoor",
     "patio furniture cushion|patio furniture cushion|seat cushion|chaise lounge cushion|deep seat cushion set|bench cushion|"
     "outdoor throw pillow|seat and back cushion",
     "packs:.2 pattern:.25 colour:.35", "", 1.8),
    # covers
    ("Patio Furniture Covers", OUT + " / Outdoor Furniture Covers", "cover",
     "patio furniture cover|patio furniture cover|patio furniture set cover", "fit:.6 heavy:.25 colour:.15", "", 0.4),
    ("Patio Furniture Covers", OUT + " / Outdoor Furniture Covers", "cover",
     "patio table cover|patio chair cover|patio sofa cover|chaise lounge cover|patio loveseat cover|"
     "patio umbrella cover|ottoman cover|adirondack chair cover|bar stool cover|patio swing cover",
     "shape:.3 heavy:.35 colour:.15", "", 0.8),
    ("Grill Covers", OUT + " / Grills & Outdoor Cooking / Grill Covers", "cover",
     "grill cover|smoker cover|griddle cover", "grilltype:.5 heavy:.4 diameter:.15", "", 0.6),
    ("Outdoor Heater Covers", OUT + " / Outdoor Furniture Covers / Heater & Fire Pit Covers", "cover",
     "fire pit cover|patio heater cover|air conditioner cover|fire table cover", "shape:.4 heavy:.4", "", 0.4),
    # outdoor living
    ("Patio Umbrellas", OUT + " / Patio Umbrellas & Shade / Patio Umbrellas", "outdoor_living",
     "patio umbrella|market umbrella|cantilever umbrella|offset umbrella|beach umbrella", "collection:.2 colour:.4",
     "", 1.4),
    ("Umbrella Bases", OUT + " / Patio Umbrellas & Shade / Umbrella Bases", "outdoor_living",
     "umbrella base|free standing umbrella base|weighted umbrella base", "metal:.3 shape:.3", "", 0.5),
    ("Fire Pits", OUT + " / Fire Pits & Outdoor Heating / Fire Pits", "outdoor_living",
     "fire pit|wood burning fire pit|propane fire pit table|gas fire pit table|fire bowl",
     "collection:.2 metal:.35 stone:.15 shape:.3", "", 1.2),
    ("Patio Heaters", OUT + " / Fire Pits & Outdoor Heating / Patio Heaters", "outdoor_living",
     "patio heater|propane patio heater|electric patio heater|tabletop patio heater", "metal:.3", "", 0.5),
    ("Planters", OUT + " / Outdoor Decor / Planters", "outdoor_living",
     "planter|pot planter|raised garden bed|window box planter|planter box|hanging planter",
     "sets:.15 diameter:.2 colour:.25 stone:.15", "", 1.6),
    ("Deck Boxes", OUT + " / Outdoor Storage / Deck Boxes", "outdoor_living",
     "deck box|deck box|patio storage box|patio furniture storage box|patio furniture storage bag|storage bench",
     "colour:.3 outdoor:.3", "", 0.8),
    ("Storage Sheds", OUT + " / Outdoor Storage / Sheds", "outdoor_living",
     "storage shed|lean-to shed|garden shed|bike shed", "colour:.2 metal:.2", "", 0.6),
    ("Gazebos", OUT + " / Patio Umbrellas & Shade / Gazebos", "outdoor_living", "gazebo|hardtop gazebo|pop-up canopy|pergola",
     "metal:.3", "", 0.6),
    ("Bird Feeders", OUT + " / Outdoor Decor / Bird Feeders & Houses", "outdoor_living",
     "bird feeder|hanging bird feeder|birdhouse|bird bath", "colour:.3 metal:.2", "", 0.6),
    ("Garden Statues", OUT + " / Outdoor Decor / Garden Statues", "outdoor_living",
     "garden statue|garden gnome|fountain|solar fountain|outdoor wall fountain", "style:.3 stone:.2", "", 0.6),
    ("Outdoor Rugs", OUT + " / Outdoor Decor / Outdoor Rugs", "rugs",
     "outdoor rug|indoor/outdoor rug|outdoor area rug|reversible outdoor rug", "rugsize:.5 pattern:.35 colour:.35",
     "", 1.2),
    # lighting
    ("Chandeliers", LT + " / Ceiling Lights / Chandeliers", "lighting",
     "chandelier|candle style chandelier|drum chandelier|sputnik chandelier|empire chandelier|globe chandelier",
     "collection:.35 lights:.65 style:.15 finish:.2", "", 3),
    ("Pendant Lighting", LT + " / Ceiling Lights / Pendant Lighting", "lighting",
     "pendant|pendant light|drum pendant|globe pendant|lantern pendant|kitchen island pendant|mini pendant",
     "collection:.35 lights:.4 finish:.3 glass:.1", "", 3),
    ("Flush Mount Lighting", LT + " / Ceiling Lights / Flush Mount Lighting", "lighting",
     "flush mount|semi flush mount|led flush mount|flush mount ceiling light", "collection:.3 lights:.4 finish:.3", "", 2),
    ("Table Lamps", LT + " / Lamps & Shades / Table Lamps", "lighting",
     "table lamp|table lamp|buffet lamp|desk lamp|bedside lamp|accent lamp|table lamp set",
     "collection:.35 lampheight:.35 style:.2 finish:.15 ceramic:.15", "", 3),
    ("Floor Lamps", LT + " / Lamps & Shades / Floor Lamps", "lighting",
     "floor lamp|arched floor lamp|tree floor lamp|torchiere floor lamp|tripod floor lamp",
     "collection:.3 lampheight:.35 style:.2 finish:.2", "", 2),
    ("Wall Sconces", LT + " / Wall Lights / Wall Sconces", "lighting",
     "wall sconce|armed sconce|plug-in wall sconce|swing arm wall lamp|flush mounted sconce",
     "collection:.35 lights:.3 finish:.35", "", 2),
    ("Bathroom Vanity Lighting", LT + " / Wall Lights / Bathroom Vanity Lighting", "lighting",
     "vanity light|bath bar|vanity light fixture|dimmable bath bar", "collection:.35 lights:.6 finish:.35", "", 2),
    ("Ceiling Fans", LT + " / Ceiling Fans", "lighting",
     "ceiling fan|ceiling fan with light|outdoor ceiling fan|flush mount ceiling fan|bladeless ceiling fan",
     "fanwidth:.55 smallpieces:.0 finish:.2", "with remote:.2; with light kit:.15", 2),
    ("Outdoor Wall Lighting", LT + " / Outdoor Lighting / Outdoor Wall Lanterns", "lighting",
     "outdoor wall lantern|outdoor sconce|outdoor wall light|motion sensor wall light|barn light",
     "collection:.3 lights:.3 finish:.35", "", 1.6),
    ("Landscape Lighting", LT + " / Outdoor Lighting / Landscape Lighting", "lighting",
     "pathway light|path light|solar path light|spot light|deck light|well light", "packs:.35 bulb:.3 finish:.2", "", 1),
    ("String Lights", LT + " / Outdoor Lighting / String Lights", "lighting",
     "string light|fairy light|globe string light|edison bulb string light|outdoor string light", "bulb:.35 colour:.2", "", 0.8),
    ("Lamp Shades", LT + " / Lamps & Shades / Lamp Shades", "lighting",
     "lamp shade|drum lamp shade|empire lamp shade|bell lamp shade", "diameter:.5 colour:.3 fabric:.2", "", 0.7),
    ("Track Lighting", LT + " / Ceiling Lights / Track Lighting", "lighting", "track kit|track lighting kit|track head",
     "lights:.5 finish:.35", "", 0.4),
    ("Lamp Sets", LT + " / Lamps & Shades / Lamp Sets", "lighting", "lamp set|table and floor lamp set",
     "smallpieces:.5 finish:.3", "", 0.4),
    ("Night Lights", LT + " / Lamps & Shades / Night Lights", "lighting", "night light|plug-in night light|motion sensor night light",
     "packs:.4 bulb:.3", "", 0.4),
    # rugs
    ("Area Rugs", RG + " / Area Rugs", "rugs",
     "area rug|area rug|area rug|rug|hand-tufted area rug|flatweave rug|performance rug|washable area rug",
     "collection:.3 rugsize:.35 pattern:.35 colour:.35 rugmaterial:.25", "", 5),
    ("Runner Rugs", RG + " / Runners", "rugs", "runner rug|hallway runner|runner", "collection:.25 runnersize:.4 pattern:.3 colour:.3",
     "", 1.2),
    ("Doormats", RG + " / Doormats", "rugs", "doormat|outdoor doormat|non-slip outdoor doormat|coir doormat",
     "pattern:.2 colour:.25", "", 1.2),
    ("Kitchen Mats", RG + " / Kitchen Mats", "rugs", "kitchen mat|anti-fatigue mat|kitchen runner|comfort mat",
     "pattern:.25 colour:.3 packs:.15", "", 0.7),
    ("Rug Pads", RG + " / Rug Pads", "rugs", "rug pad|non-slip rug pad|felt rug pad", "rugsize:.5", "", 0.5),
    ("Kids Rugs", BK + " / Kids Rugs", "rugs", "kids rug|play mat|kids area rug|nursery rug", "rugsize:.3 colour:.4", "", 0.5),
    # bedding
    ("Comforters & Sets", BD + " / Comforters & Sets", "bedding",
     "comforter set|comforter|down alternative comforter|all season comforter|bedspread set",
     "bedsize:.4 pieces:.35 pattern:.2 bedfabric:.25", "", 2.5),
    ("Duvet Covers & Sets", BD + " / Duvet Covers & Sets", "bedding",
     "duvet cover set|duvet cover|reversible duvet cover set|duvet set",
     "bedsize:.35 pieces:.3 pattern:.2 bedfabric:.35", "", 1.8),
    ("Sheets & Pillowcases", BD + " / Sheets & Pillowcases", "bedding",
     "sheet set|sheet set|fitted sheet|flat sheet|pillowcase pair|deep pocket sheet set",
     "bedsize:.4 bedfabric:.45 colour:.2", "", 2.4),
    ("Quilts & Coverlets", BD + " / Quilts, Coverlets & Sets", "bedding",
     "quilt set|quilt|coverlet set|coverlet|reversible quilt set", "bedsize:.35 pieces:.25 pattern:.3 bedfabric:.2", "", 1.3),
    ("Blankets & Throws", BD + " / Blankets & Throws", "bedding",
     "throw blanket|throw|blanket|knit throw blanket|fleece blanket|weighted blanket|electric blanket",
     "colour:.35 pillowfabric:.35 bedsize:.15", "", 2),
    ("Pillow Shams", BD + " / Pillowcases & Shams", "bedding", "pillow sham|euro sham|pillowcase|sham pair",
     "bedsize:.3 bedfabric:.35 colour:.3", "", 0.8),
    ("Bed Skirts", BD + " / Bed Skirts", "bedding", "bed skirt|dust ruffle|wrap around bed skirt", "bedsize:.5 colour:.3",
     "", 0.4),
    ("Kids Bedding", BK + " / Kids Bedding", "bedding", "kids comforter set|toddler bedding set|crib bedding set|kids sheet set",
     "bedsize:.3 pieces:.3 colour:.3", "", 0.6),
    # soft decor
    ("Throw Pillows", DP + " / Decorative Pillows & Blankets / Throw Pillows", "soft_decor",
     "throw pillow|square pillow|lumbar pillow|floor pillow|throw pillow|indoor/outdoor throw pillow",
     "pillowsize:.35 pattern:.3 colour:.3 pillowfabric:.3", "", 3.5),
    ("Pillow Covers", DP + " / Decorative Pillows & Blankets / Pillow Covers", "soft_decor",
     "throw pillow cover|pillow cover|lumbar pillow cover|square pillow cover|throw pillow cover",
     "pillowsize:.55 pattern:.3 colour:.3 pillowfabric:.35", "", 1.6),
    ("Curtains & Drapes", DP + " / Window Treatments / Curtains & Drapes", "soft_decor",
     "curtain panel|blackout curtain panel|sheer curtain panel|curtain pair|thermal curtain panels|valance",
     "pattern:.3 colour:.4 curtainfabric:.3", "", 2.4),
    ("Slipcovers", LR + " / Slipcovers", "soft_decor", "sofa slipcover|t-cushion sofa slipcover|box cushion slipcover|chair slipcover|recliner slipcover",
     "colour:.4 slipfabric:.4", "", 0.6),
    ("Table Linens", KT + " / Table Linens", "soft_decor",
     "tablecloth|table runner|placemat|cloth napkin|set of placemats|round tablecloth",
     "packs:.25 pattern:.3 colour:.35 pillowfabric:.25", "", 1.4),
    ("Kitchen Towels", KT + " / Kitchen Linens / Dish Towels", "soft_decor", "dish towel|tea towel|kitchen towel set|apron|oven mitt",
     "packs:.4 pattern:.3 colour:.3", "", 0.7),
    ("Throw Blankets", DP + " / Decorative Pillows & Blankets / Throw Blankets", "soft_decor",
     "throw|throw blanket|knit throw|faux fur throw|cotton throw", "colour:.4 pattern:.3 pillowfabric:.3", "", 1.2),
    # window
    ("Curtain Rods", DP + " / Window Treatments / Curtain Rods & Hardware", "fixtures",
     "curtain rod|double curtain rod|tension rod|curtain rod set|traverse rod", "finish:.5 diameter:.0", "", 0.9),
    ("Blinds & Shades", DP + " / Window Treatments / Blinds & Shades", "soft_decor",
     "roller shade|cordless cellular shade|roman shade|bamboo shade|faux wood blind|blackout roller shade",
     "colour:.4", "", 1.2),
    # wall decor
    ("Wall Art", DP + " / Wall Art", "wall_decor",
     "wall art|canvas print|framed print|wall decor|painting|graphic art print|wall art set",
     "art:.55 artmedium:.0 smallpieces:.15 colour:.2", "on canvas:.35; print:.1", 4),
    ("Wall Mirrors", DP + " / Mirrors / Wall Mirrors", "wall_decor",
     "wall mirror|accent mirror|round wall mirror|bathroom mirror|vanity mirror|sunburst mirror|arch mirror",
     "collection:.35 shape:.3 style:.2 finish:.15", "", 2.6),
    ("Floor Mirrors", DP + " / Mirrors / Floor Mirrors", "wall_decor", "floor mirror|full length mirror|leaner mirror|cheval mirror",
     "collection:.3 style:.25 wood:.2 metal:.2", "", 1),
    ("Wall Clocks", DP + " / Clocks / Wall Clocks", "wall_decor", "wall clock|oversized wall clock|wall clock|cuckoo clock",
     "diameter:.4 style:.3 metal:.2", "", 0.9),
    ("Wall Shelves", ST + " / Wall Shelving / Wall Shelves", "wall_decor",
     "floating shelf|wall shelf|ladder shelf|corner shelf|accent shelf|wall mounted shelf", "sets:.2 wood:.35 metal:.2",
     "", 1.4),
    ("Picture Frames", DP + " / Picture Frames & Albums / Picture Frames", "wall_decor",
     "picture frame|collage picture frame|gallery frame|photo frame", "sets:.25 colour:.3 wood:.25 metal:.15", "", 1),
    ("Tapestries", DP + " / Wall Decor / Tapestries", "wall_decor", "tapestry|wall hanging|macrame wall hanging|woven wall hanging",
     "pattern:.35 colour:.3", "", 0.6),
    ("Wallpaper", HI + " / Wallpaper", "wall_decor", "wallpaper roll|peel and stick wallpaper|wallpaper|wall mural",
     "pattern:.45 colour:.35", "", 1.2),
    ("Wall Hooks", ST + " / Wall Hooks", "wall_decor", "wall hook|wall mounted coat rack|key holder|wall organizer",
     "packs:.3 metal:.3 wood:.2", "", 0.8),
    # accents
    ("Vases", DP + " / Decorative Accessories / Vases, Urns, Jars & Bottles", "accents",
     "vase|table vase|floor vase|bud vase|jar|urn", "sets:.15 colour:.35 ceramic:.35 glass:.15", "", 1.8),
    ("Candles", DP + " / Candles & Holders / Candles", "accents", "scented candle|jar candle|pillar candle|flameless candle|taper candle",
     "candlescent:.55 packs:.2 colour:.2", "", 1.2),
    ("Candle Holders", DP + " / Candles & Holders / Candle Holders", "accents",
     "candle holder|candlestick|lantern|hurricane candle holder|tealight holder", "sets:.25 metal:.35 glass:.2", "", 1.2),
    ("Faux Plants & Trees", DP + " / Faux Plants & Flowers / Faux Plants & Trees", "accents",
     "tree in pot|plant in planter|artificial plant|faux tree|floor plant in pot|artificial tree",
     "height:.2 plant:.7", "", 1.8),
    ("Artificial Flowers", DP + " / Faux Plants & Flowers / Artificial Flowers", "accents",
     "floral arrangement|arrangement in vase|faux stem|flowers in vase|centerpiece", "plant:.6 colour:.3 packs:.15", "", 1),
    ("Decorative Objects", DP + " / Decorative Accessories / Decorative Objects", "accents",
     "figurine|sculpture|decorative object|bookend set|decorative box|statue", "style:.3 colour:.25 metal:.15 stone:.15",
     "", 1.6),
    ("Decorative Trays", DP + " / Decorative Accessories / Decorative Trays", "accents",
     "decorative tray|serving tray|ottoman tray|vanity tray", "shape:.35 wood:.3 metal:.2 stone:.1", "", 0.8),
    ("Wreaths", DP + " / Seasonal Decor / Wreaths & Garlands", "accents", "wreath|garland|eucalyptus wreath|boxwood wreath",
     "diameter:.4", "", 0.7),
    ("Baskets", ST + " / Baskets & Bins", "storage", "basket|storage basket|wicker basket|laundry basket|bin|storage bin",
     "packs:.3 colour:.2", "with lid:.15; with handles:.15", 1.8),
    ("Jewelry Boxes", BR + " / Jewelry Boxes & Organizers", "accents", "jewelry box|jewelry organizer|ring dish|watch box",
     "colour:.35 wood:.25", "", 0.5),
    # kitchen
    ("Cookware Sets", KT + " / Cookware & Bakeware / Cookware Sets", "kitchen", "cookware set|pots and pans set|cookware set",
     "collection:.2 bigpieces:.7 kitchenmat:.5", "", 1.6),
    ("Frying Pans & Skillets", KT + " / Cookware & Bakeware / Frying Pans & Skillets", "kitchen",
     "frying pan|skillet|fry pan|grill pan|wok|crepe pan", "diameter:.45 kitchenmat:.55", "", 1.4),
    ("Dutch Ovens", KT + " / Cookware & Bakeware / Dutch Ovens & Braisers", "kitchen", "dutch oven|round dutch oven|braiser|cocotte",
     "capacity:.5 kitchenmat:.4 kitchencolour:.3", "", 0.9),
    ("Saucepans & Stock Pots", KT + " / Cookware & Bakeware / Pots", "kitchen", "saucepan|stock pot|sauce pan|pasta pot",
     "capacity:.5 kitchenmat:.5", "with lid:.4", 0.8),
    ("Bakeware", KT + " / Cookware & Bakeware / Bakeware", "kitchen",
     "baking sheet|baking dish|loaf pan|muffin pan|cake pan|pie dish|bakeware set",
     "packs:.2 kitchenmat:.3 ceramic:.2", "", 1),
    ("Knife Sets", KT + " / Cutlery / Knife Sets", "kitchen", "knife block set|knife set|chef's knife|steak knife set|santoku knife",
     "bigpieces:.4 kitchenmat:.2", "", 1),
    ("Cutting Boards", KT + " / Kitchen Utensils & Tools / Cutting Boards", "kitchen",
     "cutting board|chopping block|butcher block cutting board|serving board", "wood:.5 shape:.2", "", 0.8),
    ("Kitchen Utensils", KT + " / Kitchen Utensils & Tools", "kitchen",
     "utensil set|spatula|ladle|whisk|kitchen tongs|utensil crock|pizza cutter|can opener",
     "smallpieces:.2 kitchenmat:.3 wood:.15", "", 1.2),
    ("Food Storage Containers", KT + " / Food Storage / Food Storage Containers", "kitchen",
     "food storage container set|food storage container|meal prep container set", "bigpieces:.4 foodmat:.4", "with lids:.2",
     0.7),
    ("Kitchen Canisters & Jars", KT + " / Food Storage / Kitchen Canisters & Jars", "kitchen",
     "kitchen canister|canister set|mason jar|cookie jar", "smallpieces:.3 ceramic:.3 glass:.2", "", 0.7),
    ("Spice Racks", KT + " / Kitchen Organization / Spice Racks", "kitchen", "spice rack|spice jar set|spice organizer",
     "tiers:.3 metal:.2 wood:.2", "", 0.5),
    ("Dish Racks", KT + " / Kitchen Organization / Dish Racks", "kitchen", "dish rack|dish drainer|over the sink dish rack",
     "tiers:.3 metal:.3", "", 0.5),
    ("Kitchen Sinks", HI + " / Kitchen Remodel / Kitchen Sinks", "fixtures",
     "kitchen sink|undermount kitchen sink|farmhouse kitchen sink|drop-in kitchen sink|double basin kitchen sink",
     "sinkwidth:.3 kitchenmat:.35", "", 1),
    ("Kitchen Faucets", HI + " / Kitchen Remodel / Kitchen Faucets", "fixtures",
     "kitchen faucet|pull down kitchen faucet|bridge faucet|pot filler|bar faucet", "collection:.3 finish:.5",
     "with soap dispenser:.1", 1.2),
    ("Range Hoods", HI + " / Kitchen Remodel / Range Hoods", "fixtures", "range hood|wall mount range hood|under cabinet range hood|island range hood",
     "vanitywidth:.45 kitchenmat:.3", "", 0.6),
    # tabletop
    ("Dinnerware Sets", KT + " / Tableware & Drinkware / Dinnerware Sets", "tabletop", "dinnerware set|dinnerware set|place setting",
     "collection:.25 bigpieces:.6 ceramic:.4 colour:.2", "", 1.4),
    ("Dinner Plates", KT + " / Tableware & Drinkware / Plates", "tabletop", "dinner plate|salad plate|dessert plate|plate set",
     "packs:.4 ceramic:.35 colour:.25", "", 0.8),
    ("Serving Bowls", KT + " / Serveware / Serving Bowls", "tabletop", "serving bowl|salad bowl|fruit bowl|pasta bowl",
     "packs:.2 ceramic:.3 wood:.15 colour:.2", "", 0.9),
    ("Serving Platters", KT + " / Serveware / Platters", "tabletop", "serving platter|platter|cake stand|tiered server|charcuterie board",
     "shape:.3 ceramic:.3 wood:.15", "", 0.8),
    ("Flatware Sets", KT + " / Flatware & Cutlery / Flatware Sets", "tabletop", "flatware set|silverware set|cutlery set",
     "bigpieces:.7 finish:.2", "", 0.7),
    ("Drinking Glasses", KT + " / Tableware & Drinkware / Drinking Glasses", "tabletop",
     "drinking glass|highball glass|tumbler|glassware set|double old fashioned glass", "packs:.5 glass:.4 colour:.1", "", 0.9),
    ("Wine Glasses", KT + " / Tableware & Drinkware / Wine Glasses", "tabletop",
     "wine glass|stemless wine glass|red wine glass|champagne flute", "packs:.6 glass:.4", "", 0.7),
    ("Coffee Mugs", KT + " / Tableware & Drinkware / Mugs & Teacups", "tabletop", "coffee mug|mug|teacup|travel mug|mug set",
     "packs:.35 ceramic:.3 colour:.3", "", 0.8),
    ("Pitchers & Carafes", KT + " / Serveware / Pitchers & Carafes", "tabletop", "pitcher|carafe|beverage dispenser|water pitcher",
     "glass:.4 ceramic:.2", "", 0.4),
    # appliances
    ("Slow Cookers", KT + " / Small Kitchen Appliances / Slow Cookers", "appliances",
     "slow cooker|programmable slow cooker|multi-cooker|pressure cooker", "capacity:.6 kitchencolour:.2", "", 0.8),
    ("Coffee Makers", KT + " / Small Kitchen Appliances / Coffee Makers", "appliances",
     "coffee maker|drip coffee maker|single serve coffee maker|cold brew coffee maker|french press|pour over coffee maker",
     "cup:.4 kitchencolour:.3", "", 1),
    ("Espresso Machines", KT + " / Small Kitchen Appliances / Espresso Machines", "appliances",
     "espresso machine|espresso maker|semi-automatic espresso machine|milk frother", "kitchencolour:.4", "", 0.5),
    ("Toasters", KT + " / Small Kitchen Appliances / Toasters & Toaster Ovens", "appliances",
     "toaster|toaster oven|2 slice toaster|4 slice toaster|countertop oven|air fryer toaster oven",
     "kitchencolour:.45 style:.15", "", 0.8),
    ("Blenders", KT + " / Small Kitchen Appliances / Blenders", "appliances", "blender|countertop blender|personal blender|immersion blender",
     "kitchencolour:.4", "", 0.6),
    ("Stand Mixers", KT + " / Small Kitchen Appliances / Mixers", "appliances", "stand mixer|tilt-head stand mixer|hand mixer",
     "capacity:.3 kitchencolour:.45", "", 0.5),
    ("Tea Kettles", KT + " / Small Kitchen Appliances / Tea Kettles", "appliances",
     "tea kettle|electric kettle|whistling tea kettle|gooseneck kettle", "capacity:.3 kitchencolour:.45", "", 0.6),
    ("Air Fryers", KT + " / Small Kitchen Appliances / Air Fryers", "appliances", "air fryer|digital air fryer|air fryer oven",
     "capacity:.5 kitchencolour:.3", "", 0.5),
    ("Space Heaters", HI + " / Heating & Cooling / Space Heaters", "appliances",
     "space heater|electric fireplace|ceramic space heater|oil-filled radiator heater|infrared heater", "colour:.3", "", 0.7),
    ("Fans", HI + " / Heating & Cooling / Fans", "appliances", "tower fan|pedestal fan|table fan|floor fan|box fan",
     "diameter:.35 colour:.3", "", 0.6),
    ("Vacuums", HI + " / Cleaning / Vacuums", "appliances", "vacuum|cordless stick vacuum|robot vacuum|upright vacuum|handheld vacuum",
     "colour:.2", "", 0.5),
    # bath fixtures
    ("Bathroom Vanities", HI + " / Bathroom Remodel & Bathroom Fixtures / Bathroom Vanities", "fixtures",
     "single bathroom vanity set|double bathroom vanity set|bathroom vanity|free-standing single bathroom vanity|wall-mounted vanity",
     "collection:.4 vanitywidth:.6 colour:.2", "", 2.6),
    ("Bathroom Faucets", HI + " / Bathroom Remodel & Bathroom Fixtures / Bathroom Sink Faucets", "fixtures",
     "bathroom faucet|widespread bathroom faucet|single hole bathroom faucet|centerset bathroom faucet|vessel sink faucet",
     "collection:.35 finish:.5", "with drain assembly:.25", 1.6),
    ("Shower Heads", HI + " / Bathroom Remodel & Bathroom Fixtures / Shower Heads", "fixtures",
     "shower head|rain shower head|handheld shower head|dual shower head|shower system|shower panel",
     "collection:.25 diameter:.3 finish:.45", "", 1.2),
    ("Toilets", HI + " / Bathroom Remodel & Bathroom Fixtures / Toilets", "fixtures",
     "toilet|two-piece toilet|one-piece toilet|elongated toilet|dual flush toilet|toilet seat",
     "collection:.3 colour:.2", "", 0.9),
    ("Bathtubs", HI + " / Bathroom Remodel & Bathroom Fixtures / Bathtubs", "fixtures",
     "freestanding bathtub|soaking bathtub|clawfoot tub|alcove bathtub|whirlpool tub", "tablewidth:.4 colour:.2", "", 0.7),
    ("Bathroom Sinks", HI + " / Bathroom Remodel & Bathroom Fixtures / Bathroom Sinks", "fixtures",
     "vessel sink|undermount bathroom sink|pedestal sink|wall mount sink|console sink", "shape:.4 ceramic:.3", "", 0.8),
    ("Medicine Cabinets", HI + " / Bathroom Remodel & Bathroom Fixtures / Medicine Cabinets", "fixtures",
     "medicine cabinet|recessed medicine cabinet|surface mount medicine cabinet|lighted medicine cabinet",
     "vanitywidth:.35 finish:.2", "with mirror:.2", 0.7),
    ("Towel Warmers", HI + " / Bathroom Remodel & Bathroom Fixtures / Towel Warmers", "fixtures",
     "towel warmer|wall mounted towel warmer|free standing towel warmer", "finish:.5", "", 0.3),
    ("Door Knobs", HI + " / Doors & Door Hardware / Door Knobs", "fixtures",
     "passage knob|privacy knob|door lever|entry knob|dummy knob|handleset", "collection:.35 finish:.5",
     "with round rose:.25", 1.2),
    ("Cabinet & Drawer Pulls", HI + " / Cabinet Hardware / Cabinet & Drawer Pulls", "fixtures",
     "drawer pull|bar pull|cup pull|cabinet knob|mushroom knob|appliance pull", "packs:.35 finish:.5", "", 1.2),
    ("Mailboxes", HI + " / Exterior Hardware / Mailboxes", "fixtures", "mailbox|wall mounted mailbox|post mount mailbox|locking mailbox",
     "finish:.3 colour:.3", "", 0.5),
    ("House Numbers", HI + " / Exterior Hardware / House Numbers", "fixtures", "house number|address plaque|house number sign",
     "finish:.4 style:.2", "", 0.4),
    # bath accessories
    ("Bath Towels", BA + " / Bath Towels", "bath", "towel set|bath towel|hand towel|bath sheet|washcloth set|towel",
     "smallpieces:.4 towel:.45 colour:.35", "", 1.6),
    ("Bath Rugs & Mats", BA + " / Bath Rugs & Mats", "bath", "bath rug|bath mat|memory foam bath mat|contour rug|bath runner",
     "smallpieces:.2 colour:.4 towel:.2", "", 1.4),
    ("Shower Curtains", BA + " / Shower Curtains & Accessories / Shower Curtains", "bath",
     "shower curtain|fabric shower curtain|shower curtain liner|shower curtain set|shower curtain with hooks",
     "pattern:.4 colour:.3", "", 1.6),
    ("Towel Bars & Racks", BA + " / Bathroom Hardware / Towel Bars", "bath", "towel bar|towel ring|towel rack|robe hook|towel stand",
     "finish:.5 tiers:.15", "", 1.2),
    ("Bathroom Accessory Sets", BA + " / Bathroom Accessories / Bathroom Accessory Sets", "bath",
     "bathroom accessory set|soap dispenser|toothbrush holder|tumbler|soap dish|vanity tray", "smallpieces:.35 ceramic:.3 colour:.2",
     "", 1),
    ("Toilet Paper Holders", BA + " / Bathroom Hardware / Toilet Paper Holders", "bath",
     "toilet paper holder|free standing toilet paper holder|wall mounted toilet paper holder", "finish:.5", "", 0.6),
    ("Shower Caddies", BA + " / Bathroom Storage / Shower Caddies", "bath", "shower caddy|tension pole caddy|hanging shower caddy",
     "tiers:.35 finish:.3", "", 0.5),
    ("Over-the-Toilet Storage", BA + " / Bathroom Storage / Over-the-Toilet Storage", "bath",
     "over-the-toilet storage|over the toilet cabinet|space saver", "shelves:.3 colour:.3 wood:.2", "", 0.8),
    ("Bathroom Cabinets", BA + " / Bathroom Storage / Bathroom Cabinets & Shelving", "bath",
     "bathroom cabinet|linen cabinet|free-standing bathroom cabinet|wall bathroom cabinet", "collection:.3 colour:.3 wood:.2", "",
     1.2),
    ("Hampers", BA + " / Laundry / Hampers", "bath", "laundry hamper|hamper|laundry sorter|tilt out hamper", "colour:.3 wood:.15",
     "with lid:.2", 0.6),
    # storage
    ("Closet Systems", ST + " / Closet Storage / Closet Systems", "storage",
     "closet system|walk-in closet system|reach-in closet system|closet organizer", "tablewidth:.3 colour:.3", "", 0.8),
    ("Garment Racks", ST + " / Closet Storage / Garment Racks", "storage", "garment rack|clothing rack|rolling garment rack",
     "tiers:.3 metal:.4", "", 0.6),
    ("Shoe Storage", ST + " / Closet Storage / Shoe Storage", "storage",
     "shoe rack|shoe storage cabinet|shoe storage bench|over the door shoe organizer|shoe organizer",
     "tiers:.35 colour:.2 wood:.2 metal:.2", "", 1.4),
    ("Cube Storage", ST + " / Storage Shelving / Cube Storage", "storage", "cube bookcase|cube organizer|cube storage unit|storage cube",
     "collection:.2 colour:.3", "", 0.8),
    ("Coat Racks", ST + " / Entryway Furniture / Coat Racks & Umbrella Stands", "storage",
     "coat rack|freestanding coat rack|hall tree|umbrella stand|entryway bench with coat rack",
     "collection:.25 wood:.3 metal:.3", "", 1),
    ("Storage Drawers", ST + " / Storage Drawers", "storage", "storage drawer unit|rolling storage cart|drawer unit|utility cart",
     "drawers:.4 tiers:.2 colour:.3", "", 0.7),
    ("Under Bed Storage", ST + " / Under Bed Storage", "storage", "under bed storage bag|under bed storage box|under bed drawer",
     "packs:.4 colour:.2", "", 0.4),
    ("Garage Storage", ST + " / Garage Storage / Garage Cabinets", "storage",
     "garage cabinet|tool chest|workbench|pegboard|garage shelving unit|wall mounted bike rack", "metal:.4 tiers:.2", "", 0.8),
    ("Utility Shelves", ST + " / Storage Shelving / Utility Shelves", "storage", "shelving unit|utility shelf|wire shelving unit|storage rack",
     "shelves:.5 metal:.3", "", 0.8),
    ("Magazine Racks", ST + " / Magazine Racks", "storage", "magazine rack|magazine holder|newspaper rack", "metal:.3 wood:.3", "", 0.3),
    ("Desk Organizers", OF + " / Office Supplies / Desk Organizers", "storage", "desk organizer|file organizer|letter tray|desktop organizer",
     "tiers:.3 wood:.3 metal:.2", "", 0.5),
    ("Laundry Room Organization", ST + " / Laundry Room Organization", "storage",
     "ironing board|drying rack|laundry cart|clothes drying rack|wall mounted drying rack", "metal:.3", "", 0.5),
]

COVERED = {
    "patio furniture cover": "outdoor patio furniture",
    "patio furniture set cover": "outdoor patio furniture",
    "patio table cover": "patio table",
    "patio chair cover": "patio chairs",
    "patio sofa cover": "patio sofa",
    "patio loveseat cover": "loveseat",
    "chaise lounge cover": "chaise lounge",
    "patio umbrella cover": "patio umbrella",
    "ottoman cover": "outdoor ottoman",
    "adirondack chair cover": "adirondack chairs",
    "bar stool cover": "outdoor bar stools",
    "patio swing cover": "porch swing",
    "grill cover": "grill",
    "smoker cover": "smoker",
    "griddle cover": "griddle",
    "fire pit cover": "fire pit",
    "patio heater cover": "patio heater",
    "air conditioner cover": "air conditioner",
    "fire table cover": "fire table",
}

# Words that cannot start a copied run even where a run could otherwise start.
SMALL = {"x", "with", "and", "of", "in", "for", "on", "to", "by", "over", "up", "top", "&", "/", "n", "under", "the"}
# Words inside a product type that belong to the word before them ("bean bag chair", "fire pit cover").
TYPE_NO_START = {"alternative", "arm", "around", "back", "bag", "basin", "block", "box", "brew", "bulb", "burning",
                 "conditioner", "down", "fashioned", "fryer", "fur", "gravity", "heated", "height", "hole", "hugger",
                 "leaf", "length", "lounge", "mount", "mounted", "number", "out", "pit", "pocket", "pole", "poster",
                 "prep", "season", "sensor", "serve", "slice", "stick", "style", "topper", "wood", "standing", "set",
                 "seat", "island", "paper", "old", "chair"}


def _parse_slots(text: str) -> list[tuple[str, float]]:
    out = []
    for item in text.split():
        key, p = item.split(":")
        out.append((key, float(p)))
    return out


def _parse_suffixes(text: str) -> list[tuple[str, float]]:
    out = []
    for item in filter(None, (s.strip() for s in text.split(";"))):
        phrase, p = item.rsplit(":", 1)
        out.append((phrase, float(p)))
    return out


CLASSES = [
    {
        "class": c, "category": cat, "family": fam, "types": types.split("|"), "slots": _parse_slots(slots),
        "suffixes": _parse_suffixes(suffixes), "weight": weight,
    }
    for c, cat, fam, types, slots, suffixes, weight in CLASS_TABLE
]

MATERIAL_KEYS = {"wood", "metal", "stone", "fabric", "outdoor", "bedfabric", "rugmaterial", "pillowfabric",
                 "kitchenmat", "ceramic", "glass", "towel", "foodmat", "curtainfabric", "slipfabric"}
FABRIC_KEYS = {"fabric", "bedfabric", "pillowfabric", "towel", "curtainfabric", "slipfabric"}
FABRIC_DEFAULT = ["linen", "cotton", "polyester", "velvet", "cotton blend", "chenille", "microfiber"]
COUNTRIES = ["china", "vietnam", "india", "united states", "malaysia", "indonesia", "turkey", "mexico", "taiwan",
             "thailand", "canada", "italy"]


def article(phrase: str) -> str:
    """'a coffee table', 'an end table'."""
    vowel = phrase[0] in "aeiou" and not phrase.startswith(("uni", "use", "one"))
    return ("an " if vowel else "a ") + phrase


# ---------------------------------------------------------------------------------------------------------
# Template tags
# ---------------------------------------------------------------------------------------------------------

_TAG = re.compile(r"^<([^>]*)>")


def _words_pattern(tags: list[str]):
    """A pattern finding any of the tags as whole words (or their plurals) in a product's key."""
    if not tags:
        return None
    alternatives = "|".join(re.escape(t) for t in sorted(tags, key=len, reverse=True))
    return re.compile(rf"(?<![a-z0-9])(?:{alternatives})(?:s|es)?(?![a-z0-9])")


def _compile(template: str):
    """'<a,b;!c>text' -> (pattern of wanted words, pattern of unwanted words, required name slots, text)."""
    match = _TAG.match(template)
    if not match:
        return None, None, (), template
    pos, neg, needs = [], [], []
    for group in match.group(1).split(";"):
        group = group.strip()
        target = neg if group.startswith("!") else pos
        for tag in group.lstrip("!").split(","):
            if tag.startswith("@"):
                needs.append(tag[1:])
            elif tag:
                target.append(tag)
    return _words_pattern(pos), _words_pattern(neg), tuple(needs), template[match.end():]


for _family in FAMILIES.values():
    for _key in ("rooms", "open", "body", "copy", "close", "mats"):
        _family[_key] = [_compile(t) for t in _family[_key]]
_COPY_GENERIC = [_compile(t) for t in COPY_GENERIC]
_BODY_GENERIC = [_compile(t) for t in BODY_GENERIC]
_CLOSE_GENERIC = [_compile(t) for t in CLOSE_GENERIC]


def _fitting(templates, key: str, slots_present) -> list[str]:
    """The templates whose tags fit a product; key is its class, type and name, lowercase."""
    out = []
    for pos, neg, needs, text in templates:
        if pos is not None and not pos.search(key):
            continue
        if neg is not None and neg.search(key):
            continue
        if any(n not in slots_present for n in needs):
            continue
        out.append(text)
    return out


# ---------------------------------------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------------------------------------


def make_name(cls: dict, rng: random.Random) -> dict:
    """A lowercase product name of 2-9 words, kept as segments [(slot, text)] so runs start at sensible words."""
    product_type = rng.choice(cls["types"])
    type_words = set(product_type.split())
    for _attempt in range(20):
        segments: list[tuple[str, str]] = []
        used_material = False
        for key, p in cls["slots"]:
            if rng.random() >= p:
                continue
            if key in MATERIAL_KEYS:
                if used_material and rng.random() < 0.85:
                    continue
                used_material = True
            text = rng.choice(COLLECTIONS) if key == "collection" else rng.choice(V[key])
            if set(text.split()) & type_words:  # "gas fire pit table", not "gas gas fire pit table"
                continue
            segments.append((key, text))
        segments.append(("type", product_type))
        for phrase, p in cls["suffixes"]:
            if rng.random() < p:
                segments.append(("suffix", phrase))
                break
        words = " ".join(text for _, text in segments).split()
        if len(set(words)) < len(words):
            continue
        if len(segments) == 1 and _attempt < 3 and rng.random() < MODIFIED_NAMES:
            continue  # most names carry at least one modifier
        if 2 <= len(words) <= 9:
            return {"segments": segments, "type": product_type, "name": " ".join(words)}
    segments = [("style", rng.choice(V["style"][:12])), ("type", product_type)]
    return {"segments": segments, "type": product_type, "name": " ".join(t for _, t in segments)}


def run_starts(segments: list[tuple[str, str]]) -> list[bool]:
    """For each word of the name: can a copied run start there and read as a noun phrase after 'this'?

    A run may start at the first word of a modifier (collection, size, style, colour, material ...), or inside the
    product type at any word but its last (''patio furniture cover'', ''furniture cover''), never inside a suffix
    (''with storage'') and never at a small word or a number inside the type.
    """
    starts = []
    for kind, text in segments:
        words = text.split()
        for j, word in enumerate(words):
            if kind == "suffix":
                ok = False
            elif kind == "type":
                ok = j == 0 or (j <= len(words) - 2 and not word[0].isdigit() and words[j - 1] not in SMALL
                                and words[j + 1] not in SMALL and word not in TYPE_NO_START)
            else:
                ok = j == 0
            starts.append(ok and word not in SMALL)
    return starts


MODIFIED_NAMES = 0.85
RUN_LENGTHS = [(2, 0.3), (3, 0.45), (4, 0.25)]
FROM_TYPE = 0.3  # chance that a copied run is exactly the product type (and any suffix) when that is 2-4 words


def copy_run(segments: list[tuple[str, str]], rng: random.Random) -> str | None:
    """The name's last 2-4 words, starting where a run may start; None when no length works."""
    words = " ".join(text for _, text in segments).split()
    starts = run_starts(segments)
    choices = [(k, w) for k, w in RUN_LENGTHS if k <= len(words) and starts[len(words) - k]]
    if not choices:
        return None
    k = _weighted(rng, choices)
    type_start = len(" ".join(text for kind, text in segments[: [kind for kind, _ in segments].index("type")]).split())
    if any(k2 == len(words) - type_start for k2, _ in choices) and rng.random() < FROM_TYPE:
        k = len(words) - type_start  # copy text often repeats just the product type: "this patio furniture cover"
    return " ".join(words[-k:])


# ---------------------------------------------------------------------------------------------------------
# Descriptions
# ---------------------------------------------------------------------------------------------------------

SENTENCE_COUNTS = [(1, 0.05), (2, 0.08), (3, 0.14), (4, 0.19), (5, 0.19), (6, 0.15), (7, 0.11), (8, 0.09)]
COPY_POSITION = [(1, 0.45), (2, 0.35), (3, 0.20)]
COPY_RATE = 0.72        # chance that a described product of two or more sentences repeats the end of its name
OUTDOOR_BEFORE_PATIO = 0.7  # "this outdoor patio ..." when a copied run starts with "patio"


def _weighted(rng: random.Random, pairs):
    x = rng.random() * sum(w for _, w in pairs)
    for value, w in pairs:
        x -= w
        if x <= 0:
            return value
    return pairs[-1][0]


def _fill(template: str, slots: dict) -> str:
    text = template.format(**slots)
    return text[0].upper() + text[1:]


def _adjective(family: dict, run: str, rng: random.Random, template: str) -> str:
    """An optional adjective before a copied run ("this outdoor patio furniture cover")."""
    first = run.split()[0]
    if first == "patio" and "outdoor" in family["adj"]:
        return "outdoor " if rng.random() < OUTDOOR_BEFORE_PATIO else ""
    if len(run.split()) <= 3 and rng.random() < 0.45:
        adj = rng.choice(family["adj"])
        if adj not in run.split() and adj not in template.lower():
            return adj + " "
    return ""


def _product_key(cls: dict, product: dict) -> str:
    """'class type name', lowercase, for matching template tags as whole words."""
    return f"{cls['class']} {product['type']} {product['name']}".lower()


def _materials(family: dict, key: str, seg: dict) -> list[str]:
    return _fitting(family["mats"], key, seg) or [t for _, _, _, t in family["mats"]]


def make_description(product: dict, cls: dict, rng: random.Random) -> str:
    family = FAMILIES[cls["family"]]
    segments = product["segments"]
    seg = dict(segments)
    key = _product_key(cls, product)
    mats = _materials(family, key, seg)
    material = next((text for k, text in segments if k in MATERIAL_KEYS), None)
    fabric = next((text for k, text in segments if k in FABRIC_KEYS), None)
    if fabric is None:
        fabric = rng.choice(mats if cls["family"] in ("bedding", "soft_decor") else FABRIC_DEFAULT)
    run = copy_run(segments, rng)
    rooms = _fitting(family["rooms"], key, seg) or ["home"]
    slots = {
        "type": product["type"],
        "a_type": article(product["type"]),
        "material": material or rng.choice(mats),
        "wood": seg.get("wood") or rng.choice(V["wood"][:12]),
        "fabric": fabric,
        "finish": seg.get("finish") or seg.get("colour") or rng.choice(V["finish"]),
        "colour": seg.get("colour") or seg.get("finish") or seg.get("kitchencolour") or rng.choice(V["colour"]),
        "style": seg.get("style") or rng.choice(V["style"][:12]),
        "room": rng.choice(rooms),
        "years": rng.choice([1, 2, 3, 5, 5, 10]),
        "n": rng.randint(2, 5),
        "n2": rng.randint(6, 10),
        "collection": seg.get("collection") or rng.choice(COLLECTIONS),
        "name": product["name"],
        "covered": COVERED.get(product["type"], "outdoor furniture"),
        "cap": rng.choice([200, 250, 300, 330, 400, 500]),
        "watts": rng.choice([600, 800, 1000, 1200, 1500, 1800]),
        "a": "",
        "run": run or product["type"],
    }
    n_sentences = _weighted(rng, SENTENCE_COUNTS)
    openers = _fitting(family["open"], key, seg)
    opener = rng.choice(openers)
    if "{name}" in opener and rng.random() < 0.6:  # the full-name opener is rarer than the others
        opener = rng.choice([o for o in openers if "{name}" not in o] or openers)
    opener_copies = "{run}" in opener
    if opener_copies:
        slots["a"] = _adjective(family, slots["run"], rng, opener)
    sentences = [_fill(opener, slots)]
    body = _fitting(family["body"], key, seg)
    picked = rng.sample(body, k=min(len(body), n_sentences - 1))
    if len(picked) < n_sentences - 1:  # a product with few fitting sentences gets at most one plain filler
        picked += rng.sample(_fitting(_BODY_GENERIC, key, seg), k=1)
    sentences += [_fill(s, slots) for s in picked]
    if len(sentences) >= 3 and rng.random() < 0.35:
        sentences[-1] = _fill(rng.choice(_fitting(family["close"] + _CLOSE_GENERIC, key, seg)), slots)
    if run is not None and len(sentences) >= 2 and rng.random() < (0.5 if opener_copies else COPY_RATE):
        own = _fitting(family["copy"], key, seg)
        template = rng.choice(own * 2 + _fitting(_COPY_GENERIC, key, seg))
        slots["a"] = _adjective(family, run, rng, template)
        position = min(_weighted(rng, COPY_POSITION), len(sentences) - 1)
        sentence = _fill(template, slots)
        if len(sentences) >= 4 and rng.random() < 0.5:
            sentences[position] = sentence
        else:
            sentences.insert(position, sentence)
    # a sentence never appears twice in one description
    seen, unique = set(), []
    for s in sentences:
        if s not in seen:
            seen.add(s)
            unique.append(s)
    return " ".join(unique[:8])


# ---------------------------------------------------------------------------------------------------------
# Features and ratings
# ---------------------------------------------------------------------------------------------------------


def make_features(product: dict, cls: dict, rng: random.Random) -> str:
    family = FAMILIES[cls["family"]]
    w0, w1, d0, d1, h0, h1 = family["dims"]
    seg = dict(product["segments"])
    material = next((text for key, text in product["segments"] if key in MATERIAL_KEYS), None)
    pairs = [
        ("overallwidth-sidetoside", f"{rng.uniform(w0, w1):.1f}".rstrip("0").rstrip(".")),
        ("overalldepth-fronttoback", f"{rng.uniform(d0, d1):.1f}".rstrip("0").rstrip(".")),
        ("overallheight-toptobottom", f"{rng.uniform(h0, h1):.1f}".rstrip("0").rstrip(".")),
        ("producttype", product["type"]),
        ("material", material or rng.choice(_materials(family, _product_key(cls, product), seg))),
        ("color", seg.get("colour") or seg.get("finish") or rng.choice(V["colour"])),
        ("dsprimaryproductstyle", seg.get("style") or rng.choice(V["style"][:12])),
        ("assemblyrequired", rng.choice(["yes", "no"])),
        ("countryoforigin", rng.choice(COUNTRIES)),
        ("warrantylength", f"{rng.choice([1, 1, 2, 3, 5, 10])} year"),
        ("overallproductweight", f"{rng.uniform(0.5, 150):.1f}".rstrip("0").rstrip(".")),
        ("commercialwarranty", rng.choice(["yes", "no", "no"])),
    ]
    if "size" in " ".join(seg):
        pairs.append(("size", next(t for k, t in product["segments"] if "size" in k)))
    keep = [p for p in pairs if rng.random() < 0.7]
    rng.shuffle(keep)
    return "|".join(f"{k}:{v}" for k, v in keep)


def make_ratings(rng: random.Random) -> tuple[float | None, float | None, float | None]:
    if rng.random() < 0.17:
        return None, None, None
    count = max(1, int(rng.lognormvariate(3.2, 1.6)))
    mean = min(5.0, max(1.0, rng.gauss(4.4, 0.45)))
    if count < 4:
        mean = rng.choice([1.0, 3.0, 4.0, 5.0, 5.0, 5.0])
    average = round(mean * 2) / 2
    reviews = max(1, int(count * rng.uniform(0.55, 1.0)))
    return float(count), float(average), float(reviews)


# ---------------------------------------------------------------------------------------------------------
# The catalogue
# ---------------------------------------------------------------------------------------------------------


def _is_validation(product_id: int) -> bool:
    return zlib.crc32(str(product_id).encode()) % 10 == 0  # the same rule as lib.store.split_of


def chapter_id(n_products: int) -> int | None:
    """The id the chapter's product gets: the 42nd validation id (or the last one a small catalogue has)."""
    ids = [i for i in range(n_products) if _is_validation(i)][: CHAPTER_VALIDATION_RANK + 1]
    return ids[-1] if ids else None


def generate(n_products: int = N_PRODUCTS, seed: int = SEED) -> pd.DataFrame:
    """The stand-in catalogue as a DataFrame in WANDS's column layout, ids 0..n_products-1."""
    rng = random.Random(seed)
    cumulative = list(itertools.accumulate(c["weight"] for c in CLASSES))
    cover_class = next(c for c in CLASSES if c["class"] == "Patio Furniture Covers")
    chapter = chapter_id(n_products)
    rows = []
    for product_id in range(n_products):
        if product_id == chapter:
            cls = cover_class
            name = CHAPTER_NAME
            description = CHAPTER_DESCRIPTION
            segments = [("fit", "double chaise"), ("type", "patio furniture cover")]
            product = {"segments": segments, "type": "patio furniture cover", "name": name}
        else:
            cls = rng.choices(CLASSES, cum_weights=cumulative)[0]
            product = make_name(cls, rng)
            while product["name"] == CHAPTER_NAME:  # the chapter's product is one of a kind
                product = make_name(cls, rng)
            description = make_description(product, cls, rng) if rng.random() >= 0.125 else None
        product_class = cls["class"]
        if rng.random() < 0.03:  # WANDS lists a second class for some products
            other = rng.choice([c for c in CLASSES if c["family"] == cls["family"]])["class"]
            if other != product_class:
                product_class = f"{product_class}|{other}"
        category = cls["category"] if rng.random() > 0.01 else None
        features = make_features(product, cls, rng) if rng.random() > 0.02 else None
        rating_count, average_rating, review_count = make_ratings(rng)
        rows.append((product_id, product["name"], product_class, category, description, features,
                     rating_count, average_rating, review_count))
    frame = pd.DataFrame(rows, columns=WANDS_COLUMNS)
    for column in ("rating_count", "average_rating", "review_count"):
        frame[column] = frame[column].astype("float64")
    return frame


def to_bytes(frame: pd.DataFrame) -> bytes:
    """The gzip-compressed tab-separated file, byte-for-byte reproducible (no timestamp, no file name)."""
    text = frame.to_csv(sep="\t", index=False, lineterminator="\n")
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def write(path: Path = OUTPUT, n_products: int = N_PRODUCTS, seed: int = SEED) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = to_bytes(generate(n_products, seed))
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    temporary.replace(path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the store's stand-in catalogue (WANDS product.csv format).")
    parser.add_argument("--products", type=int, default=N_PRODUCTS, help="number of products (default 43,000)")
    parser.add_argument("--seed", type=int, default=SEED, help="random seed (default 2026)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where to write (default data/products.csv.gz)")
    args = parser.parse_args(argv)
    path = write(args.output, args.products, args.seed)
    print(f"wrote {args.products:,} products to {path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
