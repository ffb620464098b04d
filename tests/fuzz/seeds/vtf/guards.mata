@NFA-bits
%Initial q
%Final r
q (x & y) | z r
r x&!y q
r \false \true
q !(x | y | z) q
