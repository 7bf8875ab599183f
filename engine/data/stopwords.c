/* engine/data/stopwords.c: datm's own stop-word lists for `datm corpus build`: English
 * (the default) and, for `--stopwords-lang`, French, German and Spanish.
 *
 * Written for this project: English function words (articles, pronouns, prepositions,
 * conjunctions, auxiliaries and modals, common adverbs of degree / time / place), the
 * fragments that our tokeniser leaves from contractions ("don't" -> "don"; one-letter
 * pieces are dropped by the minimum token length anyway), titles, number words, and a few
 * reporting / dialogue words that dominate narrative and news text without carrying topic
 * ("said", "oh"). The other languages' lists hold their function words (articles, pronouns,
 * prepositions, conjunctions, the common forms of the auxiliaries, frequent adverbs), written
 * as the tokeniser emits them: case folded (German "ss" for the sharp s) and in NFC. Every
 * list is kept in strict byte order for binary search; a test checks the order. */
#include <stdlib.h>
#include <string.h>

#include "data/corpus_build.h"

static const char *const stopwords[] = {
    "about", "above", "according", "across", "actually", "after", "afterwards", "again",
    "against", "ago", "ah", "all", "almost", "alone", "along", "already", "also", "although",
    "always", "am", "among", "amongst", "an", "and", "another", "any", "anybody", "anyhow",
    "anyone", "anything", "anyway", "anywhere", "are", "aren", "around", "as", "aside", "at",
    "away", "be", "became", "because", "become", "becomes", "becoming", "been", "before",
    "beforehand", "behind", "being", "below", "beside", "besides", "between", "beyond",
    "both", "but", "by", "can", "cannot", "cant", "certain", "certainly", "could", "couldn",
    "did", "didn", "do", "does", "doesn", "doing", "don", "done", "down", "dr", "during",
    "each", "eg", "eight", "either", "eleven", "else", "elsewhere", "enough", "especially",
    "etc", "even", "ever", "every", "everybody", "everyone", "everything", "everywhere",
    "except", "far", "few", "fifteen", "fifty", "first", "five", "for", "former", "formerly",
    "forty", "four", "from", "further", "furthermore", "get", "gets", "getting", "go", "goes",
    "going", "gone", "got", "had", "hadn", "has", "hasn", "have", "haven", "having", "he",
    "hence", "her", "here", "hereafter", "hereby", "herein", "hers", "herself", "him",
    "himself", "his", "how", "however", "hundred", "ie", "if", "in", "inc", "indeed",
    "instead", "into", "is", "isn", "it", "its", "itself", "just", "least", "less", "let",
    "lets", "like", "likely", "ll", "ltd", "many", "may", "maybe", "me", "meanwhile", "might",
    "mine", "more", "moreover", "most", "mostly", "mr", "mrs", "ms", "much", "must", "my",
    "myself", "namely", "neither", "never", "nevertheless", "next", "nine", "no", "nobody",
    "none", "nor", "not", "nothing", "now", "nowhere", "of", "off", "often", "oh", "ok",
    "okay", "on", "once", "one", "ones", "only", "onto", "or", "other", "others", "otherwise",
    "ought", "our", "ours", "ourselves", "out", "over", "own", "per", "perhaps", "please",
    "quite", "rather", "re", "really", "said", "same", "say", "says", "second", "seem",
    "seemed", "seeming", "seems", "seven", "several", "shall", "she", "should", "shouldn",
    "since", "six", "sixty", "so", "some", "somebody", "somehow", "someone", "something",
    "sometime", "sometimes", "somewhat", "somewhere", "still", "such", "ten", "than", "that",
    "the", "their", "theirs", "them", "themselves", "then", "thence", "there", "thereafter",
    "thereby", "therefore", "therein", "thereupon", "these", "they", "third", "thirty",
    "this", "those", "though", "thousand", "three", "through", "throughout", "thru", "thus",
    "to", "together", "too", "toward", "towards", "twelve", "twenty", "two", "under",
    "unless", "until", "unto", "up", "upon", "us", "ve", "very", "via", "was", "wasn", "we",
    "well", "were", "weren", "what", "whatever", "when", "whence", "whenever", "where",
    "whereas", "whereby", "wherein", "whereupon", "wherever", "whether", "which", "while",
    "whither", "who", "whoever", "whom", "whose", "why", "will", "with", "within", "without",
    "would", "wouldn", "ye", "yes", "yet", "you", "your", "yours", "yourself", "yourselves",
};

/* French: articles, pronouns, prepositions, conjunctions, forms of être/avoir, common adverbs (180 words) */
static const char *const stop_fr[] = {
    "a", "afin", "ai", "aie", "aient", "ainsi", "alors", "as", "au", "aucun", "aucune",
    "aujourd", "auprès", "auquel", "aussi", "autant", "autre", "autres", "aux", "avaient",
    "avais", "avait", "avant", "avec", "avez", "avoir", "avons", "ayant", "bien", "c", "car",
    "ce", "ceci", "cela", "celle", "celles", "celui", "cependant", "ces", "cet", "cette",
    "ceux", "chacun", "chaque", "chez", "ci", "comme", "comment", "d", "dans", "de", "depuis",
    "des", "deux", "devant", "doit", "donc", "dont", "du", "elle", "elles", "en", "encore",
    "entre", "es", "est", "et", "eu", "eux", "faire", "fait", "fois", "font", "hors", "ici",
    "il", "ils", "j", "je", "jusqu", "jusque", "l", "la", "laquelle", "le", "lequel", "les",
    "lesquels", "leur", "leurs", "lors", "lorsque", "lui", "là", "m", "ma", "mais", "me",
    "mes", "moi", "moins", "mon", "même", "mêmes", "n", "ne", "ni", "non", "nos", "notre",
    "nous", "on", "ont", "or", "ou", "où", "par", "parce", "pas", "pendant", "peu", "peut",
    "plus", "plusieurs", "pour", "pourquoi", "puis", "qu", "quand", "que", "quel", "quelle",
    "quelles", "quels", "qui", "quoi", "s", "sa", "sans", "se", "selon", "ses", "si", "sien",
    "soi", "soit", "son", "sont", "sous", "sur", "t", "ta", "tandis", "te", "tes", "toi", "ton",
    "tous", "tout", "toute", "toutes", "très", "tu", "un", "une", "uns", "vers", "voici",
    "voilà", "vos", "votre", "vous", "y", "ça", "étaient", "étais", "était", "étant",
    "été", "être",
};

/* German: articles, pronouns, prepositions, conjunctions, forms of sein/haben/werden and the modals, common adverbs (171 words) */
static const char *const stop_de[] = {
    "aber", "alle", "allem", "allen", "aller", "alles", "als", "also", "am", "an", "ander",
    "andere", "anderem", "anderen", "anderer", "anderes", "auch", "auf", "aus", "bei", "bin",
    "bis", "bist", "da", "damit", "dann", "das", "dass", "dein", "deine", "dem", "den", "denn",
    "der", "des", "deshalb", "dessen", "die", "dies", "diese", "diesem", "diesen", "dieser",
    "dieses", "doch", "dort", "du", "durch", "ein", "eine", "einem", "einen", "einer", "eines",
    "er", "es", "etwas", "euch", "euer", "für", "gegen", "gewesen", "hab", "habe", "haben",
    "hat", "hatte", "hier", "hin", "hinter", "hätte", "ich", "ihm", "ihn", "ihnen", "ihr",
    "ihre", "ihrem", "ihren", "ihrer", "im", "in", "indem", "ins", "ist", "jede", "jedem",
    "jeden", "jeder", "jedes", "jetzt", "kann", "kein", "keine", "können", "könnte", "machen",
    "man", "manche", "mein", "meine", "mich", "mir", "mit", "muss", "musste", "nach", "nicht",
    "nichts", "noch", "nun", "nur", "ob", "oder", "ohne", "sehr", "sein", "seine", "seinem",
    "seinen", "seiner", "selbst", "sich", "sie", "sind", "so", "solche", "soll", "sollte",
    "sondern", "sonst", "um", "und", "uns", "unser", "unter", "viel", "vom", "von", "vor",
    "war", "waren", "warst", "was", "weg", "weil", "weiter", "welche", "welchem", "welchen",
    "welcher", "welches", "wenn", "werde", "werden", "wie", "wieder", "will", "wir", "wird",
    "wo", "wollen", "wollte", "würde", "würden", "zu", "zum", "zur", "zwar", "zwischen",
    "über",
};

/* Spanish: articles, pronouns, prepositions, conjunctions, forms of ser/estar/haber/tener, common adverbs (128 words) */
static const char *const stop_es[] = {
    "a", "al", "algo", "algunas", "algunos", "ante", "antes", "aquel", "aquella", "aquellas",
    "aquello", "aquellos", "aquí", "así", "aun", "aunque", "bien", "cada", "como", "con",
    "contra", "cual", "cuando", "cuál", "cómo", "de", "del", "desde", "donde", "dos", "el",
    "ella", "ellas", "ello", "ellos", "en", "entre", "era", "eran", "eres", "es", "esa", "esas",
    "ese", "eso", "esos", "esta", "estaba", "estaban", "estar", "estas", "este", "esto",
    "estos", "estoy", "está", "están", "fue", "fueron", "ha", "había", "habían", "han",
    "hasta", "hay", "la", "las", "le", "les", "lo", "los", "me", "mi", "mis", "mucho", "muy",
    "más", "nada", "ni", "no", "nos", "nosotros", "o", "os", "otra", "otras", "otro", "otros",
    "para", "pero", "poco", "por", "porque", "que", "quien", "quienes", "qué", "se", "sea",
    "ser", "si", "sido", "sin", "sobre", "son", "su", "sus", "sí", "también", "tan", "te",
    "tener", "tiene", "tienen", "todo", "todos", "tu", "tú", "un", "una", "uno", "unos",
    "usted", "ustedes", "y", "ya", "yo", "él",
};

size_t datm_stopword_count(void) { return sizeof stopwords / sizeof stopwords[0]; }

const char *datm_stopword_at(size_t i)
{
    return i < datm_stopword_count() ? stopwords[i] : NULL;
}

static int cmp(const void *key, const void *elem)
{
    return strcmp((const char *)key, *(const char *const *)elem);
}

int datm_stopword_is(const char *word)
{
    return bsearch(word, stopwords, datm_stopword_count(), sizeof stopwords[0], cmp) != NULL;
}

typedef struct stop_list {
    const char *lang;
    const char *const *words;
    size_t n;
} stop_list;

static const stop_list lists[] = {
    {"en", stopwords, sizeof stopwords / sizeof stopwords[0]},
    {"fr", stop_fr, sizeof stop_fr / sizeof stop_fr[0]},
    {"de", stop_de, sizeof stop_de / sizeof stop_de[0]},
    {"es", stop_es, sizeof stop_es / sizeof stop_es[0]},
};

static const stop_list *find_list(const char *lang)
{
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        if (lang && !strcmp(lang, lists[i].lang)) return &lists[i];
    return NULL;
}

const char *datm_stopword_langs(void) { return "en, fr, de, es"; }

int datm_stopword_lang_is(const char *lang, const char *word)
{
    const stop_list *l = find_list(lang);
    return l && bsearch(word, l->words, l->n, sizeof l->words[0], cmp) != NULL;
}

int64_t datm_stopword_lang_count(const char *lang)
{
    const stop_list *l = find_list(lang);
    return l ? (int64_t)l->n : -1;
}

const char *datm_stopword_lang_at(const char *lang, int64_t i)
{
    const stop_list *l = find_list(lang);
    return (l && i >= 0 && (size_t)i < l->n) ? l->words[i] : NULL;
}
