// Package syntaxgym reads SyntaxGym test suites (Hu et al., "A Systematic
// Assessment of Syntactic Generalization in Neural Language Models", ACL
// 2020) and scores a language model's surprisals on them.
//
// # Suites
//
// A suite is a JSON object with the fields
//
//   - meta: an object whose "name" names the suite (required) and whose
//     "metric" must be "sum", the only metric supported: a region's
//     surprisal is the sum of its tokens' surprisals. Other fields are
//     ignored.
//   - region_meta: an object mapping region numbers ("1", "2", ...) to
//     region names, kept in Suite.RegionMeta for information.
//   - predictions: a non-empty list of objects {"type": "formula",
//     "formula": F}; a missing type counts as "formula", any other type is
//     an error. Each formula is parsed once, when the suite is read.
//   - items: a non-empty list of objects {"item_number": N, "conditions":
//     [...]}. Item numbers must be present and unique. Each condition is
//     {"condition_name": C, "regions": [{"region_number": 1, "content":
//     "..."}, ...]}; condition names must be non-empty and unique within the
//     item, and the regions must be numbered 1, 2, ..., n in the order in
//     which they are listed.
//
// Every term of every prediction must name, in every item, a condition the
// item has and a region that condition has. Other fields are ignored.
//
// The sentence of a condition is the contents of its non-empty regions (a
// region is empty when its content is empty or only white space) joined by
// single spaces. Its tokens are the white-space-separated tokens of the
// lowercased sentence; each token belongs to the region whose content it
// comes from. Suite.Sentences lists the sentences in suite order: the items
// in the order of the file, and within each item its conditions in order.
//
// ReadSuite validates a suite completely. Its errors name the suite file
// (the name given to ReadSuite), and where they concern an item or a
// prediction, the item by its item_number and the prediction by its index
// in the predictions list together with its formula, as in
//
//	cleft.json: item 3: predictions[0] "(6;%np_match%) < (6;%vp%)": no condition "vp" in the item
//
// JSON syntax errors give the line and column in the file. ReadSuiteDir
// reads every *.json file of a directory except circuits.json.
//
// # Formulas
//
// A prediction is a formula in SyntaxGym's language:
//
//	formula    = logical
//	logical    = comparison { ( "&" | "|" ) comparison }
//	comparison = sum ( "<" | ">" | "=" ) sum | "(" logical ")"
//	sum        = atom { ( "+" | "-" ) atom }
//	atom       = term | number | "(" sum ")"
//	term       = "(" ( region | "*" ) ";" "%" condition "%" ")"
//
// A term (N;%c%) is the surprisal of region N (numbered from 1) of the
// condition c of the item at hand, and (*;%c%) is the sum of the
// surprisals of all of c's regions. A condition name is one or more ASCII
// letters, digits, "_", "-" or ".". A number is a decimal literal with an
// optional sign written directly before it, an optional fraction and an
// optional exponent: 0, 1.5, -2, +.5, 1e-3. There is no unary minus on
// other expressions: write 0 - (1;%c%) rather than -(1;%c%).
//
// The operators, from the loosest binding to the tightest: & (and) and
// | (or), alike; the comparisons <, > and =; + and -, alike. The binary
// arithmetic and logical operators associate to the left, so that & does
// not bind tighter than | (as in SyntaxGym's grammar, where they share a
// level, as + and - do); comparisons do not chain (a < b < c is an
// error). Parentheses group as usual, and white space between tokens is
// free. Formulas are typed: + and - and the comparisons take numbers, &
// and | take comparisons, and a formula must be a comparison or a
// combination of comparisons. So a < b & c > d | e = f is
// ((a < b) & (c > d)) | (e = f), and a < b | c > d & e = f is
// ((a < b) | (c > d)) & (e = f).
//
// The comparisons are evaluated on float64 values. < and > are strict: a
// tie (equal values) does not hold. x = y holds when x and y are close in
// the sense of NumPy's isclose, which SyntaxGym uses:
//
//	x == y || |x − y| ≤ CloseAbsTol + CloseRelTol·|y|
//
// with CloseAbsTol = 1e-3 and CloseRelTol = 1e-5 (note the asymmetry in y).
// A comparison involving NaN does not hold.
//
// ParseFormula parses a formula into an Expr tree of *Term, *Number and
// *Binary nodes; parentheses are not kept as nodes. Expr.String writes a
// formula back, with the parentheses that the tree needs, so that parsing
// the result gives a structurally equal tree. A formula that does not parse
// gives a *SyntaxError with the column (1-based byte offset) of the problem,
// and so does one longer than MaxFormulaBytes (64 KiB) or with parentheses
// nested more than MaxFormulaDepth (100) deep. Holds evaluates a formula,
// and Value a numeric expression, given the value of each term; Terms lists
// a formula's terms.
//
// # Scores
//
// Suite.Evaluate takes region surprisals in bits, per item, condition and
// region (Suite.RegionSurprisals computes them from per-token surprisals:
// a region's surprisal is the sum of its tokens', 0 for an empty region)
// and evaluates every prediction on every item. The Result of a suite
// counts
//
//   - Pairs, the number of (item, prediction) pairs, Correct, the number of
//     pairs whose prediction holds, and Accuracy = Correct/Pairs;
//   - Items, the number of items, ItemsCorrect, the number of items on
//     which every prediction holds, and ItemAccuracy = ItemsCorrect/Items.
//
// The Level selects a suite's score: PairLevel, Accuracy, the convention of
// DuSell & Chiang's SG score, or ItemLevel, ItemAccuracy, the convention of
// Hu et al. SGScore is the unweighted mean of the suites' scores.
//
// A circuit is a named group of suites; ReadCircuits reads them from a
// JSON object {"circuits": [{"name": N, "suites": [suite names]}, ...]}.
// CircuitScores gives each circuit the unweighted mean of its suites'
// scores, and fails when a circuit names a suite that was not scored.
//
// # Surprisal files
//
// Surprisals are exchanged in lm-zoo's TSV format: a header line
//
//	sentence_id	token_id	token	surprisal
//
// then one line per token with these four tab-separated fields. Sentences
// are numbered from 1 in suite order (items, then conditions, as
// Suite.Sentences lists them) and tokens from 1 within each sentence;
// surprisals are in bits. A sentence without tokens has no lines.
// ReadSurprisals checks that the file holds exactly the suite's tokens,
// compared after lowercasing, and its errors give the file name, the line,
// the sentence (with its item and condition) and the token.
// WriteSurprisals writes the format.
//
// # Errors and panics
//
// Suites, formulas (MaxFormulaBytes, MaxFormulaDepth), surprisal files
// and circuits are checked, and refused with errors naming the file and
// the item. Panics are kept for programmer errors: a nil value function
// given to Holds or Value, and nil results or items.
package syntaxgym
