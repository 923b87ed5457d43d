// The probe language (a SystemTap dialect), language.md sections 1-2.
//
// The lexer runs first; compiler/parse/Preprocessor then expands $N/@N arguments,
// @define macros and %( %) conditionals on the token vector, and only then does
// this parser see the tokens (through a ListTokenSource). The parser is driven
// one `topLevel` at a time so that Parser.cpp can resynchronise after an error.
//
// Each precedence level of language.md 2.4 is its own rule (no left recursion),
// mirroring stap's recursive-descent parser so that associativity and the
// "gotchas" of 2.6 come out the same.
grammar Sonde;

@parser::members {
  // Set by Parser.cpp before parsing. glued[i]: token i followed token i-1 with
  // nothing in between. Probe-point pieces (identifiers, keywords, '*') join into
  // one component name only when glued: `sys_*` vs `foo *`.
  const std::vector<bool> *glued = nullptr;
  bool nextIsGlued() {
    size_t i = _input->LT(1)->getTokenIndex();
    return glued != nullptr && i < glued->size() && (*glued)[i];
  }

  // `return` has no value exactly when `;` or `}` follows (stap's rule).
  bool atStatementEnd() {
    size_t t = _input->LA(1);
    return t == SEMI || t == RBRACE;
  }

  // Recursion guards (Parser.cpp sets the limits and resets the counts after an
  // error). `nesting`: expressions, statements, prefix operators, `?:` chains
  // and brace groups nest on the parser's own stack. `depth`: how deep the AST
  // can be, which every later pass recurses over: the nesting plus each
  // operator of a left-associative chain (`a + b + c` is ((a + b) + c)), which
  // the parser reads in a loop. Beyond either limit the parse is cancelled
  // with `tooDeep` set, and that is a parse error instead of a crash.
  size_t nesting = 0;
  size_t maxNesting = 1000;
  size_t depth = 0;
  size_t maxDepth = 10000;
  antlr4::Token *tooDeep = nullptr;
  bool tooDeepChain = false; // the depth limit was hit, not the nesting one
  void enterNesting() {
    ++depth;
    if (++nesting > maxNesting || depth > maxDepth) {
      tooDeep = _input->LT(1);
      tooDeepChain = nesting <= maxNesting;
      throw antlr4::ParseCancellationException("nesting too deep");
    }
  }
  void leaveNesting() {
    --nesting;
    --depth;
  }
  // One more operator in a chain; a rule's `chained` count goes at its end.
  void enterChain(size_t &chained) {
    ++chained;
    if (++depth > maxDepth) {
      tooDeep = _input->LT(1);
      tooDeepChain = true;
      throw antlr4::ParseCancellationException("chain too long");
    }
  }
  void leaveChain(size_t chained) { depth -= chained; }
}

// ------------------------------------------------------------------ top level

topLevel
    : probeDecl
    | globalDecl
    | privateDecl
    | functionDecl
    | EMBEDDED
    ;

globalDecl
    : GLOBAL globalItem (',' globalItem)* ';'?
    ;

privateDecl
    : PRIVATE ( FUNCTION functionRest
              | GLOBAL? globalItem (',' globalItem)* ';'? )
    ;

globalItem
    : IDENTIFIER wrap='%'? ('[' size=number ']')? (assign='=' init=literal)?
    ;

functionDecl
    : FUNCTION functionRest
    ;

functionRest
    : functionName (':' typeName)? '(' (param (',' param)*)? ')' (':' priority=literal)?
      (block | EMBEDDED)
    ;

functionName
    : IDENTIFIER | STRING_KW | LONG | printName
    ;

typeName
    : STRING_KW | LONG
    ;

param
    : IDENTIFIER (':' typeName)?
    ;

// `probe A = B {..}` defines an alias (also `+=`, and `= B {pro}, {epi}`);
// AstBuilder sorts out which probePoints are alias names.
probeDecl
    : PROBE probePoints (aliasOp probePoints)* block (',' epilogue=block)?
    ;

aliasOp
    : '=' | '+='
    ;

// ------------------------------------------------------------------ probe points

probePoints
    : probePoint (',' probePoint)*
    ;

probePoint
    : ppComponent ('.' ppComponent)* (optional='?' | sufficient='!')? (IF '(' expr ')')?
    ;

ppComponent
@init { enterNesting(); }
@after { leaveNesting(); }
    : ppPiece ({nextIsGlued()}? ppPiece)* ('(' literal ')')?
    | '{' probePoints '}'
    ;

ppPiece
    : IDENTIFIER | keyword | printName | '*'
    ;

keyword
    : PROBE | GLOBAL | PRIVATE | FUNCTION | IF | ELSE | FOR | FOREACH | IN | LIMIT
    | RETURN | DELETE | WHILE | BREAK | CONTINUE | NEXT | STRING_KW | LONG | TRY | CATCH
    ;

printName
    : PRINT | PRINTLN | SPRINT | SPRINTLN | PRINTF | SPRINTF | PRINTD | PRINTDLN
    | SPRINTD | SPRINTDLN | PRINT_CHAR
    ;

// A literal where stap takes one directly: global initialisers, probe-point
// arguments, function priorities. `-NUMBER` is folded here.
literal
    : strings
    | '-'? NUMBER
    ;

// A literal that must be a number (array sizes, histogram and @variance
// parameters).
number
    : '-'? NUMBER
    ;

// Adjacent string literals are one string ("a" "b" is "ab").
strings
    : STRING+
    ;

// ------------------------------------------------------------------ statements

block
    : '{' statement* '}'
    ;

statement
@init { enterNesting(); }
@after { leaveNesting(); }
    : ';'                                                   # nullStatement
    | block                                                 # blockStatement
    | TRY block CATCH ('(' IDENTIFIER ')')? block            # tryStatement
    | IF '(' expr ')' statement (ELSE statement)?           # ifStatement
    | WHILE '(' expr ')' statement                          # whileStatement
    | FOR '(' init=expr? ';' cond=expr? ';' incr=expr? ')' statement  # forStatement
    | FOREACH '(' foreachHead IN indexable slice? foreachSort? (LIMIT expr)? ')' statement
                                                            # foreachStatement
    | simpleStatement ';'?                                  # simpleStatementWithSemi
    ;

simpleStatement
    : RETURN ({atStatementEnd()}? | expr)                   # returnStatement
    | DELETE expr                                           # deleteStatement
    | BREAK                                                 # breakStatement
    | CONTINUE                                              # continueStatement
    | NEXT                                                  # nextStatement
    | expr                                                  # exprStatement
    ;

foreachHead
    : (valueVar=IDENTIFIER valueDir=sortDir? '=')? foreachKeys
    ;

foreachKeys
    : foreachKey
    | '[' foreachKey (',' foreachKey)* ']'
    ;

foreachKey
    : IDENTIFIER sortDir?
    ;

sortDir
    : '+' | '-'
    ;

slice
    : '[' indexOrStar (',' indexOrStar)* ']'
    ;

foreachSort
    : statWord? sortDir
    ;

indexable
    : histOp
    | IDENTIFIER
    ;

// ------------------------------------------------------------------ expressions

expr
@init { enterNesting(); }
@after { leaveNesting(); }
    : ternary (assignOp expr)?
    ;

assignOp
    : '=' | '<<<' | '+=' | '-=' | '*=' | '/=' | '%=' | '<<=' | '>>=' | '&=' | '^=' | '|='
    | '.='
    ;

ternary
    : logicalOr ('?' expr ':' {enterNesting();} ternary {leaveNesting();})?
    ;

logicalOr
locals [size_t chained = 0]
@after { leaveChain($chained); }
    : logicalAnd ('||' {enterChain($chained);} logicalAnd)*
    ;

logicalAnd
locals [size_t chained = 0]
@after { leaveChain($chained); }
    : bitOr ('&&' {enterChain($chained);} bitOr)*
    ;

bitOr
locals [size_t chained = 0]
@after { leaveChain($chained); }
    : bitXor ('|' {enterChain($chained);} bitXor)*
    ;

bitXor
locals [size_t chained = 0]
@after { leaveChain($chained); }
    : bitAnd ('^' {enterChain($chained);} bitAnd)*
    ;

bitAnd
locals [size_t chained = 0]
@after { leaveChain($chained); }
    : arrayIn ('&' {enterChain($chained);} arrayIn)*
    ;

arrayIn
    : comparison (IN indexable)?
    | '[' inKey (',' inKey)* ']' (IN indexable)?
    ;

inKey
    : '*'
    | comparison
    ;

indexOrStar
    : '*'
    | expr
    ;

// Operators are inline tokens so that AstBuilder can read a level's children
// as operand, operator, operand, ... without looking anything up.
comparison
locals [size_t chained = 0]
@after { leaveChain($chained); }
    : shift ( regexOp=('=~' | '!~') strings
            | (('<' | '>' | '<=' | '>=' | '==' | '!=') {enterChain($chained);} shift)+ )?
    ;

shift
locals [size_t chained = 0]
@after { leaveChain($chained); }
    : concatenation (('<<' | '>>' | '>>>') {enterChain($chained);} concatenation)*
    ;

concatenation
locals [size_t chained = 0]
@after { leaveChain($chained); }
    : additive ('.' {enterChain($chained);} additive)*
    ;

additive
locals [size_t chained = 0]
@after { leaveChain($chained); }
    : multiplicative (('+' | '-') {enterChain($chained);} multiplicative)*
    ;

multiplicative
locals [size_t chained = 0]
@after { leaveChain($chained); }
    : unary (('*' | '/' | '%') {enterChain($chained);} unary)*
    ;

unary
    : op=('+' | '-' | '!' | '~') {enterNesting();} unary {leaveNesting();}
    | crement
    ;

crement
    : op=('++' | '--') dwarfValue
    | dwarfValue (postOp=('++' | '--'))?
    ;

// Target-ish values: `&`, `->member`, `[index]` and a trailing `$`/`$$`.
dwarfValue
    : '&'? dwarfBase targetSuffix*
    ;

dwarfBase
    : TARGET
    | castOp
    | atVarOp
    | value
    ;

targetSuffix
    : '->' memberName
    | '[' expr ']'
    | DOLLARS
    ;

memberName
    : IDENTIFIER | TARGET | DOLLARS | keyword | printName
    ;

castOp
    : AT_CAST '(' expr ',' castType=strings (',' module=strings)? ')'
    ;

atVarOp
    : AT_VAR '(' varName=strings (',' module=strings)? ')'
    ;

value
    : '(' expr ')'                                          # parenValue
    | strings                                               # stringValue
    | NUMBER                                                # numberValue
    | EMBEDDED                                              # embeddedValue
    | printCall                                             # printValue
    | statWord '(' expr (',' number)* ')'                   # statValue
    | histOp ('[' indexOrStar (',' indexOrStar)* ']')?      # histValue
    | AT_DEFINED '(' expr ')'                               # definedValue
    | AT_ENTRY '(' expr ')'                                 # entryValue
    | AT_PROBEWRITE '(' IDENTIFIER ')'                      # probewriteValue
    | AT_PERF '(' strings ')'                               # perfValue
    | AT_ENUM '(' strings ')'                               # enumValue
    | AT_ENUMNAME '(' expr (',' strings (',' strings)?)? ')'  # enumNameValue
    // A variable, array element or function call; one alternative so that the
    // choice is made by the token after the name, as stap does.
    | IDENTIFIER ( '(' (expr (',' expr)*)? ')'
                 | '[' indexOrStar (',' indexOrStar)* ']' )?  # nameValue
    ;

// Argument-count rules of print/sprint (at least one) and the bare histogram
// form print(@hist_log(x)) are checked by AstBuilder.
printCall
    : formatPrint '(' strings (',' expr)* ')'
    // stap accepts ')' as the second separator (its argument loop takes either).
    | delimPrint '(' strings ',' expr (',' | ')') expr (',' expr)* ')'
    | plainPrint '(' (expr (',' expr)*)? ')'
    | PRINT_CHAR '(' expr ')'
    ;

formatPrint : PRINTF | SPRINTF ;
delimPrint  : PRINTD | PRINTDLN | SPRINTD | SPRINTDLN ;
plainPrint  : PRINT | PRINTLN | SPRINT | SPRINTLN ;

statWord
    : AT_COUNT | AT_SUM | AT_MIN | AT_MAX | AT_AVG | AT_VARIANCE
    ;

histOp
    : AT_HIST_LINEAR '(' expr ',' number ',' number ',' number ')'
    | AT_HIST_LOG '(' expr ')'
    ;

// ==================================================================== lexer

PROBE     : 'probe';
GLOBAL    : 'global';
PRIVATE   : 'private';
FUNCTION  : 'function';
IF        : 'if';
ELSE      : 'else';
FOR       : 'for';
FOREACH   : 'foreach';
IN        : 'in';
LIMIT     : 'limit';
RETURN    : 'return';
DELETE    : 'delete';
WHILE     : 'while';
BREAK     : 'break';
CONTINUE  : 'continue';
NEXT      : 'next';
STRING_KW : 'string';
LONG      : 'long';
TRY       : 'try';
CATCH     : 'catch';

// The print family is built into the grammar (stap's print_format).
PRINT      : 'print';
PRINTLN    : 'println';
SPRINT     : 'sprint';
SPRINTLN   : 'sprintln';
PRINTF     : 'printf';
SPRINTF    : 'sprintf';
PRINTD     : 'printd';
PRINTDLN   : 'printdln';
SPRINTD    : 'sprintd';
SPRINTDLN  : 'sprintdln';
PRINT_CHAR : 'print_char';

AT_CAST        : '@cast';
AT_DEFINED     : '@defined';
AT_PROBEWRITE  : '@probewrite';
AT_ENTRY       : '@entry';
AT_PERF        : '@perf';
AT_VAR         : '@var';
AT_AVG         : '@avg';
AT_COUNT       : '@count';
AT_SUM         : '@sum';
AT_MIN         : '@min';
AT_MAX         : '@max';
AT_VARIANCE    : '@variance';
AT_HIST_LINEAR : '@hist_linear';
AT_HIST_LOG    : '@hist_log';
AT_ENUM        : '@enum';
AT_ENUMNAME    : '@enumname';
// Everything else starting with '@': macros, @define, arguments (@1), and
// unknown or unsupported operators (@const, @kregister...).
ATWORD         : '@' [A-Za-z0-9_$]*;
ARGCOUNT_RAW   : '$#';
ARGCOUNT_STR   : '@#';

// A run of '$' alone is the pretty-print suffix (`$x[0] $`); it must precede
// TARGET so that equal-length matches pick it.
DOLLARS    : '$'+;
TARGET     : '$' [A-Za-z0-9_$]*;
IDENTIFIER : [A-Za-z_] [A-Za-z0-9_$]*;
// Converted like strtoull(text, 0); junk such as `12ab` is rejected there.
NUMBER     : [0-9] [A-Za-z0-9]*;
// Both are also matched unterminated (no closing quote on the line, no `%}`
// before the end of file) so that the error names the right place.
STRING     : '"' (~["\\\r\n] | '\\' ~[\r\n])* ('"' | '\\')?;
EMBEDDED   : '%{' .*? ('%}' | EOF);

PP_OPEN  : '%(';
PP_THEN  : '%?';
PP_ELSE  : '%:';
PP_CLOSE : '%)';

LSHIFT_ACC : '<<<';
RSHIFT_L   : '>>>';
SHL_ASSIGN : '<<=';
SHR_ASSIGN : '>>=';
EQ         : '==';
NE         : '!=';
LE         : '<=';
GE         : '>=';
MATCH      : '=~';
NOMATCH    : '!~';
ADD_ASSIGN : '+=';
SUB_ASSIGN : '-=';
MUL_ASSIGN : '*=';
DIV_ASSIGN : '/=';
MOD_ASSIGN : '%=';
AND_ASSIGN : '&=';
XOR_ASSIGN : '^=';
OR_ASSIGN  : '|=';
CAT_ASSIGN : '.=';
ANDAND     : '&&';
OROR       : '||';
INC        : '++';
DEC        : '--';
ARROW      : '->';
SHL        : '<<';
SHR        : '>>';
PLUS       : '+';
MINUS      : '-';
STAR       : '*';
SLASH      : '/';
PERCENT    : '%';
LT         : '<';
GT         : '>';
ASSIGN     : '=';
BANG       : '!';
TILDE      : '~';
AMP        : '&';
PIPE       : '|';
CARET      : '^';
QUESTION   : '?';
COLON      : ':';
DOT        : '.';
COMMA      : ',';
SEMI       : ';';
LPAREN     : '(';
RPAREN     : ')';
LBRACKET   : '[';
RBRACKET   : ']';
LBRACE     : '{';
RBRACE     : '}';

LINE_COMMENT  : ('#' | '//') ~[\r\n]* -> skip;
BLOCK_COMMENT : '/*' .*? ('*/' | EOF) -> skip;
WS            : [ \t\r\n\f\u000B]+ -> skip;
// Any other byte; the parser reports it where it appears.
JUNK          : .;
