/* engine/data/stopwords.c: datm's own English stop-word list for `datm corpus build`.
 *
 * Written for this project: English function words (articles, pronouns, prepositions,
 * conjunctions, auxiliaries and modals, common adverbs of degree / time / place), the
 * fragments that our tokeniser leaves from contractions ("don't" -> "don"; one-letter
 * pieces are dropped by the minimum token length anyway), titles, number words, and a few
 * reporting / dialogue words that dominate narrative and news text without carrying topic
 * ("said", "oh"). Kept in strict byte order for binary search; a test checks the order. */
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
